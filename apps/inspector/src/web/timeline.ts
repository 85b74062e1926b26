// The timeline: the heap's committed, resident and live bytes over the last minute, one point per snapshot,
// and the marks of what happened (actions in the page, a program's marks, what the snapshots showed: an
// owner taken over, an agent reaped) as labelled vertical lines.
import type { Figures, Mark } from '../stream.js';
import { BACKGROUND, bytes } from './palette.js';

const WINDOW_MS = 60_000;
const MIN_WINDOW_MS = 10_000;
const KEEP = 6000;
const COLOURS = { committed: '#5b9cf5', resident: '#9aa4b2', live: '#3fcf8e' } as const;
const MARK_COLOURS: Record<Mark['kind'], string> = { action: '#ffd166', program: '#ffd166', heap: '#ffb86b' };

export class Timeline {
  readonly samples: Figures[] = [];
  readonly marks: Mark[] = [];
  private readonly ctx: CanvasRenderingContext2D;

  constructor(private readonly canvas: HTMLCanvasElement) {
    this.ctx = canvas.getContext('2d')!;
  }

  add(f: Figures): void {
    this.samples.push(f);
    if (this.samples.length > KEEP) this.samples.splice(0, this.samples.length - KEEP);
  }

  mark(m: Mark): void {
    this.marks.push(m);
  }

  draw(): void {
    const c = this.canvas;
    const w = c.clientWidth || 800;
    const h = c.clientHeight || 170;
    if (c.width !== w || c.height !== h) {
      c.width = w;
      c.height = h;
    }
    const ctx = this.ctx;
    ctx.fillStyle = BACKGROUND;
    ctx.fillRect(0, 0, w, h);
    if (this.samples.length === 0) return;
    const end = this.samples[this.samples.length - 1]!.t;
    const span = Math.max(MIN_WINDOW_MS, Math.min(WINDOW_MS, end - this.samples[0]!.t));
    const start = end - span;
    const shown = this.samples.filter((f) => f.t >= start);
    const top = Math.max(1, ...shown.map((f) => Math.max(f.committed, f.resident ?? 0, f.live)));
    const left = 64;
    const x = (t: number) => left + ((t - start) / span) * (w - left - 8);
    const y = (v: number) => h - 16 - (v / top) * (h - 66);
    ctx.font = '11px system-ui, sans-serif';
    ctx.strokeStyle = '#2a313c';
    ctx.fillStyle = '#8b95a3';
    for (const f of [0, 0.5, 1]) {
      ctx.beginPath();
      ctx.moveTo(left, y(top * f));
      ctx.lineTo(w - 8, y(top * f));
      ctx.stroke();
      ctx.fillText(bytes(Math.round(top * f)), 4, y(top * f) + 4);
    }
    const step = span > 30_000 ? 10_000 : 5000;
    for (let ago = 0; ago <= span; ago += step) ctx.fillText(ago === 0 ? 'now' : `-${ago / 1000} s`, x(end - ago) - 12, h - 3);
    for (const key of ['resident', 'committed', 'live'] as const) {
      ctx.strokeStyle = COLOURS[key];
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      let open = false;
      for (const f of shown) {
        const v = f[key];
        if (v === null) {
          open = false;
          continue;
        }
        if (open) ctx.lineTo(x(f.t), y(v));
        else ctx.moveTo(x(f.t), y(v));
        open = true;
      }
      ctx.stroke();
    }
    ctx.lineWidth = 1;
    let row = 0;
    for (const m of this.marks) {
      if (m.t < start) continue;
      ctx.strokeStyle = MARK_COLOURS[m.kind];
      ctx.setLineDash(m.kind === 'heap' ? [3, 3] : []);
      ctx.beginPath();
      ctx.moveTo(x(m.t), 4);
      ctx.lineTo(x(m.t), h - 16);
      ctx.stroke();
      ctx.setLineDash([]);
      ctx.fillStyle = MARK_COLOURS[m.kind];
      const text = ctx.measureText(m.label).width;
      const at = x(m.t) + 3 + text > w ? x(m.t) - 3 - text : x(m.t) + 3;
      ctx.fillText(m.label, at, 11 + (row % 4) * 12);
      row++;
    }
  }
}
