// The inspector page: draws a stream of heap snapshots (the map, the bars, the timeline) from one of two
// sources: a heap in this page with the scenario's workers (the default), or a Node process that serves the page
// with `serveInspector` (`?source=node`). `?steps=...` plays a script of the page's own controls (tests and the
// screenshots use it; see steps.ts).
import type { HeapSnapshot } from '@paddock/allocator';
import type { Mark } from '../stream.js';
import { drawBars, type BarsDrawn } from './bars.js';
import { heapMarks } from './heap-marks.js';
import { connectLive } from './live.js';
import { UnitMap, type Colouring } from './map.js';
import { STATE_COLOURS, STATE_MEANINGS, bytes, classColour, ownerColour } from './palette.js';
import { pageScenario } from './page-scenario.js';
import type { Scenario } from '../scenario/scenario.js';
import { playSteps } from './steps.js';
import { Timeline } from './timeline.js';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const params = new URLSearchParams(location.search);
const source = params.get('source') === 'node' ? 'node' : 'page';

export interface Inspector {
  source: 'node' | 'page';
  map: UnitMap;
  timeline: Timeline;
  scenario: Scenario | null;
  last: HeapSnapshot | null;
  bars: BarsDrawn | null;
  frames: number;
  /** Resolves after `n` more snapshots are drawn. */
  frame(n?: number): Promise<void>;
  act(action: string): void;
}

const map = new UnitMap($('map'), $('tooltip'));
const timeline = new Timeline($('timeline'));
const waiting: { at: number; done: () => void }[] = [];
const inspector: Inspector = {
  source,
  map,
  timeline,
  scenario: null,
  last: null,
  bars: null,
  frames: 0,
  frame: (n = 1) => new Promise((done) => waiting.push({ at: inspector.frames + n, done })),
  act,
};
Object.assign(window, { __inspector: inspector });

function legend(): void {
  const items: [string, string][] = Object.entries(STATE_COLOURS).map(([name, colour]) => [colour!, `${name}: ${STATE_MEANINGS[name as keyof typeof STATE_MEANINGS]}`]);
  if (map.colouring === 'class') items.unshift([classColour(0), 'small classes'], [classColour(15), 'big classes'], [classColour(16), 'large objects']);
  else items.unshift([ownerColour(1), 'owner slot 1'], [ownerColour(2), 'slot 2'], [ownerColour(3), 'slot 3 ...']);
  items.push(['#ffb86b', 'dashed outline: arena taken over (left strip: carver | owner)']);
  $('legend').replaceChildren(
    ...items.map(([colour, text]) => {
      const span = document.createElement('span');
      const sw = document.createElement('i');
      sw.className = 'swatch';
      sw.style.background = colour;
      span.append(sw, text);
      return span;
    }),
  );
}

function render(s: HeapSnapshot): void {
  for (const m of heapMarks(inspector.last, s)) timeline.mark(m);
  timeline.add({ t: s.takenAt, committed: s.committedBytes, resident: s.residentBytes, live: s.liveBytes });
  inspector.last = s;
  const drawn = map.draw(s);
  $('map-note').hidden = s.arena !== null;
  Object.assign(window, { __drawn: drawn });
  inspector.bars = drawBars(s, $('classes'), $('agents'), $('owners'));
  $('figures').innerHTML =
    `${s.backend} · committed <b>${bytes(s.committedBytes)}</b> · resident <b>${bytes(s.residentBytes)}</b> · live <b>${bytes(s.liveBytes)}</b>` +
    (s.arena ? ` · ${s.arena.arenas.length} arenas · quarantined ${bytes(s.arena.quarantinedBytes)}` : '') +
    ` · ${s.racy ? '<b title="other agents ran while it was taken: their arenas may be a moment old">racy</b>' : 'exact'} · taken in ${s.tookMs.toFixed(1)} ms`;
  timeline.draw();
  inspector.frames++;
  for (let i = waiting.length - 1; i >= 0; i--) {
    if (waiting[i]!.at <= inspector.frames) waiting.splice(i, 1)[0]!.done();
  }
}

function addMark(m: Mark): void {
  timeline.mark(m);
  timeline.draw();
}

function act(action: string): void {
  const sc = inspector.scenario;
  if (action === 'class' || action === 'owner') {
    map.colouring = action as Colouring;
    document.querySelectorAll('[data-mode]').forEach((b) => b.classList.toggle('on', (b as HTMLElement).dataset.mode === action));
    legend();
    map.draw();
    return;
  }
  if (!sc) return;
  const label = action === 'start' ? sc.start() : action === 'pause' ? sc.pause() : action === 'idle' ? sc.idle() : action === 'add' ? sc.addProducer() : action === 'kill' ? sc.kill() : null;
  if (label) addMark({ t: Date.now(), label, kind: 'action' });
}

document.querySelectorAll<HTMLElement>('[data-action], [data-mode]').forEach((b) => b.addEventListener('click', () => act(b.dataset.action ?? b.dataset.mode!)));
legend();

if (source === 'node') {
  $('scenario-controls').hidden = true;
  $('source').textContent = 'source: a Node process (serveInspector)';
  connectLive({
    hello(backend, history, marks) {
      $('source').textContent = `source: a Node process (serveInspector), ${backend}`;
      timeline.samples.length = 0;
      timeline.marks.length = 0;
      history.forEach((f) => timeline.add(f));
      marks.forEach((m) => timeline.mark(m));
    },
    snapshot: render,
    mark: addMark,
    status: (text) => ($('status').textContent = text),
  });
} else if (!crossOriginIsolated) {
  $('scenario-controls').hidden = true;
  $('status').textContent =
    'this page is not cross-origin isolated, so it has no SharedArrayBuffer: serve it with Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp';
} else {
  const { heap, scenario } = pageScenario();
  inspector.scenario = scenario;
  $('source').textContent = 'source: a heap in this page (workers: a consumer and producers)';
  setInterval(() => render(heap.snapshot()), 100);
}

if (params.has('steps')) {
  playSteps(inspector, params.get('steps')!).catch((err: unknown) => {
    Object.assign(window, { __done: { error: String(err instanceof Error ? err.stack : err) } });
  });
}
