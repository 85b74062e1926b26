// The address-space map: one cell per arena unit, one block of rows per carved arena (in the snapshot's order,
// side by side as the width allows), a strip on the left of each block in its owner's colour (split with the slot
// that carved it when the arena was taken over), cells coloured by class or by owner; free, parked and
// quarantined units in their own colours. Hovering a cell describes its unit (and the slab or object it belongs to). What it drew last is kept
// in `drawn`, counted cell by cell, so that a test can compare it with the snapshot.
import {
  UNIT_CONTINUATION,
  UNIT_EMPTY_SLAB,
  UNIT_LARGE,
  UNIT_PARKED,
  UNIT_QUARANTINED,
  UNIT_SLAB,
  UNIT_STATE_NAMES,
  type HeapSnapshot,
} from '@paddock/allocator';
import { BACKGROUND, STATE_COLOURS, bytes, classColour, dimmed, hexAddress, ownerColour } from './palette.js';

export type Colouring = 'class' | 'owner';

/** What the map drew from one snapshot. */
export interface Drawn {
  takenAt: number;
  colouring: Colouring;
  /** Cells drawn, and how many of them in each unit state (by name). */
  cells: number;
  byState: Record<string, number>;
  /** Each arena as drawn: its owner now, the slot that carved it, whether it is drawn as taken over. */
  arenas: { base: number; owner: number; carver: number; takenOver: boolean }[];
  cellPx: number;
  columns: number;
}

const STRIP = 8; // the owner strip left of each arena
const GAP = 3; // between arenas
const MAX_HEIGHT = 560;
const CELL_SIZES = [12, 10, 8, 6, 5, 4, 3, 2];

interface Layout {
  cell: number;
  columns: number;
  rowsPerArena: number;
  arenaHeight: number;
  /** Arenas side by side, and the width of one with its strip and gap. */
  perBand: number;
  arenaWidth: number;
}

/**
 * The biggest cell that fits every arena in MAX_HEIGHT (or the smallest, scrolled): an arena's units in rows of a
 * power of two columns, arenas side by side as many as the width holds.
 */
function layout(width: number, units: number, arenas: number): Layout {
  let chosen: Layout | null = null;
  for (const cell of CELL_SIZES) {
    const columns = Math.min(units, 2 ** Math.floor(Math.log2(Math.max(1, (width - STRIP - 2) / cell))));
    const rowsPerArena = Math.ceil(units / columns);
    const arenaWidth = STRIP + 2 + columns * cell + GAP * 2;
    const perBand = Math.max(1, Math.floor(width / arenaWidth));
    chosen = { cell, columns, rowsPerArena, arenaHeight: rowsPerArena * cell + GAP, perBand, arenaWidth };
    if (chosen.arenaHeight * Math.ceil(arenas / perBand) <= MAX_HEIGHT) break;
  }
  return chosen!;
}

export class UnitMap {
  colouring: Colouring = 'class';
  drawn: Drawn | null = null;
  private snapshot: HeapSnapshot | null = null;
  private geometry: Layout | null = null;
  private readonly ctx: CanvasRenderingContext2D;

  constructor(
    private readonly canvas: HTMLCanvasElement,
    private readonly tooltip: HTMLElement,
  ) {
    this.ctx = canvas.getContext('2d')!;
    canvas.addEventListener('mousemove', (e) => this.hover(e.offsetX, e.offsetY, e.clientX, e.clientY));
    canvas.addEventListener('mouseleave', () => (this.tooltip.hidden = true));
  }

  /** Draws `s` (or the last snapshot again, after the colouring changed). */
  draw(s: HeapSnapshot | null = this.snapshot): Drawn | null {
    this.snapshot = s;
    const a = s?.arena;
    if (!s || !a) {
      this.canvas.width = 0;
      this.canvas.height = 0;
      this.drawn = null;
      return null;
    }
    const width = Math.max(200, (this.canvas.parentElement?.clientWidth ?? 800) - 14);
    const g = layout(width, a.unitsPerArena, a.arenas.length);
    this.geometry = g;
    const w = Math.min(a.arenas.length, g.perBand) * g.arenaWidth;
    const h = Math.max(g.cell, Math.ceil(a.arenas.length / g.perBand) * g.arenaHeight);
    if (this.canvas.width !== w || this.canvas.height !== h) {
      this.canvas.width = w;
      this.canvas.height = h;
    }
    const ctx = this.ctx;
    ctx.fillStyle = BACKGROUND;
    ctx.fillRect(0, 0, w, h);
    const byState: Record<string, number> = Object.fromEntries(UNIT_STATE_NAMES.map((n) => [n, 0]));
    const inner = g.cell >= 4 ? g.cell - 1 : g.cell;
    const dims = new Map<string, string>();
    const dim = (c: string) => dims.get(c) ?? (dims.set(c, dimmed(c)), dims.get(c)!);
    const arenas: Drawn['arenas'] = [];
    let cells = 0;
    for (let ai = 0; ai < a.arenas.length; ai++) {
      const arena = a.arenas[ai]!;
      const top = Math.floor(ai / g.perBand) * g.arenaHeight;
      const left = (ai % g.perBand) * g.arenaWidth;
      const takenOver = arena.owner !== arena.carver;
      arenas.push({ base: arena.base, owner: arena.owner, carver: arena.carver, takenOver });
      ctx.fillStyle = ownerColour(arena.owner);
      ctx.fillRect(left, top, STRIP, g.rowsPerArena * g.cell);
      if (takenOver) {
        ctx.fillStyle = ownerColour(arena.carver);
        ctx.fillRect(left, top, STRIP / 2, g.rowsPerArena * g.cell);
      }
      let headColour = BACKGROUND;
      for (let u = 0; u < a.unitsPerArena; u++) {
        const i = ai * a.unitsPerArena + u;
        const state = a.unitState[i]!;
        let colour: string;
        if (state === UNIT_CONTINUATION) colour = headColour;
        else {
          const own = this.colouring === 'owner' ? ownerColour(arena.owner) : classColour(a.unitClass[i]!);
          if (state === UNIT_SLAB || state === UNIT_LARGE) colour = own;
          else if (state === UNIT_EMPTY_SLAB) colour = dim(own);
          else colour = STATE_COLOURS[UNIT_STATE_NAMES[state]!] ?? BACKGROUND;
          if (state === UNIT_SLAB || state === UNIT_LARGE || state === UNIT_EMPTY_SLAB || state === UNIT_PARKED || state === UNIT_QUARANTINED) headColour = colour;
        }
        byState[UNIT_STATE_NAMES[state]!]!++;
        cells++;
        if (ctx.fillStyle !== colour) ctx.fillStyle = colour;
        ctx.fillRect(left + STRIP + 2 + (u % g.columns) * g.cell, top + Math.floor(u / g.columns) * g.cell, inner, inner);
      }
      if (takenOver) {
        ctx.strokeStyle = '#ffb86b';
        ctx.setLineDash([4, 3]);
        ctx.strokeRect(left + 0.5, top + 0.5, g.arenaWidth - GAP * 2 - 1, g.rowsPerArena * g.cell - 1);
        ctx.setLineDash([]);
      }
    }
    this.drawn = { takenAt: s.takenAt, colouring: this.colouring, cells, byState, arenas, cellPx: g.cell, columns: g.columns };
    return this.drawn;
  }

  /** The unit under (x, y) on the canvas, as an index into the snapshot's unit arrays, or -1. */
  unitAt(x: number, y: number): number {
    const a = this.snapshot?.arena;
    const g = this.geometry;
    if (!a || !g) return -1;
    const band = Math.floor(y / g.arenaHeight);
    const across = Math.floor(x / g.arenaWidth);
    const ai = band * g.perBand + across;
    const row = Math.floor((y - band * g.arenaHeight) / g.cell);
    const col = Math.floor((x - across * g.arenaWidth - STRIP - 2) / g.cell);
    if (across >= g.perBand || ai < 0 || ai >= a.arenas.length || row >= g.rowsPerArena || col < 0 || col >= g.columns) return -1;
    const u = row * g.columns + col;
    return u < a.unitsPerArena ? ai * a.unitsPerArena + u : -1;
  }

  /** Where unit `index` is drawn (its cell's centre), for a pointer that wants to hover it. */
  cellCentre(index: number): { x: number; y: number } | null {
    const a = this.snapshot?.arena;
    const g = this.geometry;
    if (!a || !g || index < 0) return null;
    const ai = Math.floor(index / a.unitsPerArena);
    const u = index % a.unitsPerArena;
    const left = (ai % g.perBand) * g.arenaWidth;
    const top = Math.floor(ai / g.perBand) * g.arenaHeight;
    return { x: left + STRIP + 2 + (u % g.columns) * g.cell + g.cell / 2, y: top + Math.floor(u / g.columns) * g.cell + g.cell / 2 };
  }

  /** What the tooltip says of unit `index`: its arena, owner, state, class, live/capacity, span. */
  describe(index: number): string {
    const s = this.snapshot!;
    const a = s.arena!;
    const ai = Math.floor(index / a.unitsPerArena);
    const u = index % a.unitsPerArena;
    const arena = a.arenas[ai]!;
    const owner = a.owners.find((o) => o.slot === arena.owner);
    const lines = [`arena ${ai} at ${hexAddress(arena.base)} · unit ${u} at ${hexAddress(arena.base + u * a.unitBytes)}`];
    let head = index;
    const state = a.unitState[index]!;
    if (state === UNIT_CONTINUATION) {
      while (head > ai * a.unitsPerArena && a.unitSpan[head] === 0) head--;
      lines.push(`continuation of the ${UNIT_STATE_NAMES[a.unitState[head]!]} at unit ${head - ai * a.unitsPerArena}`);
    }
    const hs = a.unitState[head]!;
    const cls = a.unitClass[head]!;
    const span = a.unitSpan[head]!;
    lines.push(`state: ${UNIT_STATE_NAMES[hs]}`);
    if (cls < 16 && (hs === UNIT_SLAB || hs === UNIT_EMPTY_SLAB || hs === UNIT_QUARANTINED)) {
      const size = 32 << cls;
      lines.push(`class ${cls}: ${bytes(size)} objects`);
      lines.push(`live ${a.unitLive[head]} / ${(span * a.unitBytes) / size} objects · span ${span} unit${span === 1 ? '' : 's'} (${bytes(span * a.unitBytes)})`);
    } else if (hs === UNIT_LARGE || hs === UNIT_PARKED) {
      const address = arena.base + (head - ai * a.unitsPerArena) * a.unitBytes;
      const block = a.large.find((l) => l.address === address);
      lines.push(`large block at ${hexAddress(address)}: ${block ? bytes(block.bytes) : '?'}${hs === UNIT_PARKED ? ', parked (free, kept whole)' : ', live'}`);
      lines.push(`span ${span} units (${bytes(span * a.unitBytes)})`);
    }
    lines.push(`owner: slot ${arena.owner} (${owner?.state ?? 'none'})${arena.owner !== arena.carver ? ` · taken over from slot ${arena.carver}` : ''}`);
    lines.push(arena.exact ? 'exact' : 'racy: its owner was running, figures may be a moment old');
    return lines.join('\n');
  }

  private hover(x: number, y: number, clientX: number, clientY: number): void {
    const i = this.unitAt(x, y);
    if (i < 0) {
      this.tooltip.hidden = true;
      return;
    }
    this.tooltip.textContent = this.describe(i);
    this.tooltip.hidden = false;
    this.tooltip.style.left = `${clientX + 14}px`;
    this.tooltip.style.top = `${clientY + 14}px`;
  }
}
