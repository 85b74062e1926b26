// The inspector's colours: one per unit state that is not a live slab or object, one per size class (cool for
// small, warm for big, pink for large objects), one per owner slot, and the dimmed form of a class or owner
// colour that an emptied slab takes.
import { UNIT_STATE_NAMES } from '@paddock/allocator';

export const BACKGROUND = '#0e1116';

/** Colours of the unit states that are drawn as themselves, whatever the colouring. */
export const STATE_COLOURS: Partial<Record<(typeof UNIT_STATE_NAMES)[number], string>> = {
  decommitted: '#1d232c',
  dirty: '#8a6a2f',
  retained: '#5a3f99',
  parked: '#7a4860',
  quarantined: '#ff2020',
};

/** What each state means, for the legend and the guide. */
export const STATE_MEANINGS: Record<(typeof UNIT_STATE_NAMES)[number], string> = {
  decommitted: 'free, pages given back',
  dirty: 'free, still committed (waiting for a sweep)',
  retained: 'free, kept committed for a large block',
  slab: 'slab with live objects',
  'empty slab': 'slab with no live object (dimmed)',
  large: 'live large object',
  parked: 'freed large block kept for reuse',
  continuation: 'later unit of a slab or object',
  quarantined: 'slab a reaper found half-updated',
};

const hsl = (h: number, s: number, l: number) => {
  const a = (s / 100) * Math.min(l / 100, 1 - l / 100);
  const f = (n: number) => {
    const k = (n + h / 30) % 12;
    const c = l / 100 - a * Math.max(-1, Math.min(k - 3, 9 - k, 1));
    return Math.round(c * 255);
  };
  return [f(0), f(8), f(4)] as const;
};
const hex = (rgb: readonly [number, number, number]) => `#${rgb.map((v) => v.toString(16).padStart(2, '0')).join('')}`;

/** Size class `c` (0-15), or 16 for large objects. */
export function classColour(c: number): string {
  return c >= 16 ? '#ff8fb1' : hex(hsl(200 - c * 9.5, 68, 56));
}

/** Owner slot `slot` (1, 2, ...): hues spread by the golden angle. */
export function ownerColour(slot: number): string {
  return slot <= 0 ? '#6b7280' : hex(hsl((slot * 137.508 + 200) % 360, 62, 58));
}

/** `colour` mixed 65% toward the background: an emptied slab of that class or owner. */
export function dimmed(colour: string): string {
  const c = [1, 3, 5].map((i) => parseInt(colour.slice(i, i + 2), 16));
  const b = [1, 3, 5].map((i) => parseInt(BACKGROUND.slice(i, i + 2), 16));
  return hex(c.map((v, i) => Math.round(v * 0.35 + b[i]! * 0.65)) as unknown as [number, number, number]);
}

/** Bytes in a short form. */
export function bytes(n: number | null): string {
  if (n === null) return 'n/a';
  if (n < 1024) return `${n} B`;
  if (n < 1 << 20) return `${(n / 1024).toFixed(n < 10240 ? 1 : 0)} KiB`;
  if (n < 1 << 30) return `${(n / 1048576).toFixed(1)} MiB`;
  return `${(n / 1073741824).toFixed(2)} GiB`;
}

export const hexAddress = (n: number) => `0x${n.toString(16).padStart(8, '0')}`;
