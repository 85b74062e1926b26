// A script of the page's own controls, from `?steps=`: comma-separated steps, each a control (`start`, `pause`,
// `add`, `kill`, `idle`, `class`, `owner`), `wait:MS`, `frames:N` (N more snapshots drawn), `until:takeover`
// (a snapshot shows an owner slot taken over), `until:live` (something is live), `hover:STATE` (the pointer on
// the first unit in that state), and `done`, which reports what the page drew in `window.__done`.
import { UNIT_STATE_NAMES } from '@paddock/allocator';
import type { Inspector } from './main.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(inspector: Inspector, what: string, ok: () => boolean, ms = 20_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!ok()) {
    if (performance.now() > deadline) throw new Error(`until:${what}: not seen in ${ms} ms`);
    await inspector.frame();
  }
}

/** Puts the pointer on the first unit in `state`: what the tooltip says, and whether the map found that unit there. */
function hover(inspector: Inspector, state: string): { text: string; found: boolean } {
  const a = inspector.last?.arena;
  const index = a ? a.unitState.indexOf(UNIT_STATE_NAMES.indexOf(state as (typeof UNIT_STATE_NAMES)[number])) : -1;
  const at = inspector.map.cellCentre(index);
  if (!at) return { text: '', found: false };
  const canvas = document.getElementById('map')!;
  const box = canvas.getBoundingClientRect();
  canvas.dispatchEvent(new MouseEvent('mousemove', { clientX: box.left + at.x, clientY: box.top + at.y, bubbles: true }));
  return { text: document.getElementById('tooltip')!.textContent ?? '', found: inspector.map.unitAt(at.x, at.y) === index };
}

/** What `done` reports: the last snapshot's map and figures beside what the page drew from it. */
function report(inspector: Inspector, hovered: Record<string, { text: string; found: boolean }>) {
  const s = inspector.last!;
  return {
    source: inspector.source,
    frames: inspector.frames,
    drawn: inspector.map.drawn,
    bars: inspector.bars,
    snapshot: {
      takenAt: s.takenAt,
      backend: s.backend,
      racy: s.racy,
      liveBytes: s.liveBytes,
      committedBytes: s.committedBytes,
      unitState: s.arena ? Array.from(s.arena.unitState) : [],
      arenas: s.arena?.arenas ?? [],
      owners: s.arena?.owners ?? [],
    },
    marks: inspector.timeline.marks,
    samples: inspector.timeline.samples.length,
    hovered,
  };
}

export type Report = ReturnType<typeof report>;

export async function playSteps(inspector: Inspector, script: string): Promise<void> {
  const hovered: Record<string, { text: string; found: boolean }> = {};
  await inspector.frame();
  for (const step of script.split(',')) {
    const [op, arg = ''] = step.split(':');
    Object.assign(window, { __step: step });
    if (op === 'wait') await sleep(Number(arg));
    else if (op === 'frames') await inspector.frame(Number(arg));
    else if (op === 'until' && arg === 'takeover') await until(inspector, arg, () => inspector.timeline.marks.some((m) => m.kind === 'heap' && m.label.includes('taken over')));
    else if (op === 'until' && arg === 'live') await until(inspector, arg, () => (inspector.last?.liveBytes ?? 0) > 0);
    else if (op === 'hover') hovered[arg] = hover(inspector, arg.replace('-', ' '));
    else if (op === 'done') Object.assign(window, { __done: report(inspector, hovered) });
    else if (['start', 'pause', 'add', 'kill', 'idle', 'class', 'owner'].includes(op!)) {
      (document.querySelector(`[data-action="${op}"], [data-mode="${op}"]`) as HTMLElement).click();
      await inspector.frame();
    } else throw new Error(`unknown step '${step}'`);
  }
}
