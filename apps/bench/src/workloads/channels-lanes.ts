/**
 * The lanes of the `channels` group, in the order of its table: the Paddock channel in four shapes, one
 * block a send and 32, then the baselines a user would otherwise pick (postMessage of offsets, of the
 * payload, ringbuf.js), then the C limit in the same shapes as the channel.
 */
import type { Lane, LaneKind } from './channels-protocol.js';

/** Producers -> consumers. */
export const SHAPES: readonly (readonly [number, number])[] = [
  [1, 1],
  [4, 1],
  [1, 4],
  [2, 2],
];
export const SIZES: readonly number[] = [64, 4096];
export const BATCH = 32;
export const BIG_BATCH = 1024;

function lane(label: string, kind: LaneKind, producers: number, consumers: number, batch: number): Lane {
  const shape = `${producers}->${consumers}`;
  return { name: `${label} ${shape}${batch > 1 ? ` x${batch}` : ''}`, kind, producers, consumers, batch };
}

function shaped(label: string, kind: LaneKind): Lane[] {
  return SHAPES.flatMap(([p, c]) => [lane(label, kind, p, c, 1), lane(label, kind, p, c, BATCH)]);
}

export const LANES: readonly Lane[] = [
  ...shaped('channel', 'channel'),
  lane('postMessage offsets', 'post-offsets', 1, 1, 1),
  lane('postMessage offsets', 'post-offsets', 1, 1, BATCH),
  lane('postMessage offsets', 'post-offsets', 1, 1, BIG_BATCH),
  lane('postMessage clone', 'post-clone', 1, 1, 1),
  lane('postMessage transfer', 'post-transfer', 1, 1, 1),
  lane('ringbuf.js', 'ringbuf', 1, 1, 1),
  lane('ringbuf.js', 'ringbuf', 1, 1, BATCH),
  ...shaped('C queue', 'native'),
];

/** The lane of `kind` with that shape and batch (the targets pair lanes by these). */
export function findLane(kind: LaneKind, producers: number, consumers: number, batch: number): Lane {
  const l = LANES.find((x) => x.kind === kind && x.producers === producers && x.consumers === consumers && x.batch === batch);
  if (l === undefined) throw new Error(`no lane ${kind} ${producers}->${consumers} x${batch}`);
  return l;
}

/** The key of a lane at one size in the samples and the JSON. */
export function cellKey(l: Lane, size: number): string {
  return `${l.name} ${size === 4096 ? '4 KiB' : `${size} B`}`;
}
