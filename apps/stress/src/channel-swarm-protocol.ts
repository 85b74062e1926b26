/**
 * What the channel-swarm program's main thread and its workers share: the words of their shared counters, the
 * check word every block carries, and a worker's start data.
 */

/** Shared words: the next block id, stop, findings, blocks received, then one depart word per worker slot. */
export const W_NEXT_ID = 0;
export const W_STOP = 1;
export const W_DUPLICATES = 2;
export const W_ORDER = 3;
export const W_BAD = 4;
export const W_PHANTOMS = 5;
export const W_RECEIVED = 6;
/** Word W_DEPART + slot: the incarnation of the worker in that slot that is to end by itself. */
export const W_DEPART = 8;
export const MAX_SLOTS = 8;
export const SHARED_WORDS = W_DEPART + MAX_SLOTS;

/** The fourth word of a block: a function of the other three. */
export function checkWord(incarnation: number, seq: number, id: number): number {
  return (Math.imul(incarnation, 0x9e3779b1) ^ Math.imul(seq, 0x85ebca6b) ^ id) | 0;
}

export type ChannelSwarmRole = 'producer' | 'consumer';

/** A worker's start data. */
export interface ChannelSwarmWorkerData {
  heap: unknown;
  channel: unknown;
  ledger: SharedArrayBuffer;
  shared: SharedArrayBuffer;
  role: ChannelSwarmRole;
  /** producer: send, batch, async; consumer: recv, batch, async. */
  mode: string;
  /** Its slot (for its depart word) and its incarnation (unique in the run: it names its blocks' producer). */
  slot: number;
  incarnation: number;
  /** Whether it calls `leave()` before its thread ends (else its record is taken back after). */
  leave: boolean;
}
