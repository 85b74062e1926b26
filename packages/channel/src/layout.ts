/**
 * Where a channel keeps its state: one heap block, read as Int32 words from its start. A header, then one record
 * per agent that has the channel open, then the ring's slots. See docs/design/channel.md.
 *
 * A slot is two words: its stamp and the pointer it holds. A stamp is a position (modulo 2^20) in its low 20 bits
 * and, in its top 12, the claim: 0 when no agent is in the middle of a step on the slot, else the index + 1 of the
 * record of the agent that is.
 */

/** The first word of every channel block: 'CHAN'. */
export const MAGIC = 0x4348414e;
/** What the first word becomes when the channel is dropped (before its block goes back to the heap). */
export const MAGIC_DROPPED = 0x44524f50;
/** The version of this layout, carried in handles. */
export const LAYOUT_VERSION = 2;

// ---- header words ------------------------------------------------------------------------------------------
export const H_MAGIC = 0;
/** A random non-zero number naming this channel apart from any other at the same address (another heap's). */
export const H_ID = 1;
export const H_CAPACITY = 2;
/** How many agent records follow the header. */
export const H_RECORDS = 3;
/** FLAG_CLOSED, FLAG_DROPPED. */
export const H_FLAGS = 4;
/**
 * Whether parked senders, and parked receivers, have been signalled since the last of them parked: a waiter stores 0
 * when it parks, a waker exchanges 1 in and signals only when it took a 0. So once every waiter is woken, the steps
 * made before they run again make no more notifies.
 */
export const H_SEND_SIGNALED = 5;
export const H_RECV_SIGNALED = 6;
/** Senders and receivers parked (or about to park) on their wake words: a notify is made only when one is. */
export const H_PARKED_SENDERS = 7;
export const H_PARKED_RECEIVERS = 8;
/** Senders wait on this word while the ring is full; a receive that frees a slot bumps it when one is parked. */
export const H_SEND_WAKE = 9;
/** Receivers wait on this word while the ring is empty; a send bumps it when one is parked. */
export const H_RECV_WAKE = 10;
/** The last token handed to an opener (each channel object's record owner token is unique in the channel). */
export const H_TOKENS = 11;
/** Steps of dead agents finished by others: sends delivered, blocks freed. */
export const H_RECOVERED_SENDS = 12;
export const H_RECOVERED_FREES = 13;
/** Records cleaned after their agents died. */
export const H_RECORDS_CLEANED = 14;
/** Wake signals: a send or receive that found a waiter parked bumped its wake word (and notified). */
export const H_WAKES = 15;
/**
 * Hints: the next position to send to and to receive from (the slots' stamps say what is true). Full 32 bits. Each
 * is alone in 32 words (128 bytes), so that wherever the block lies, the tail (written by senders), the head
 * (written by receivers) and the words above (read by both on every step) never share a 64-byte cache line.
 */
export const H_TAIL = 32;
export const H_HEAD = 64;
export const HEADER_WORDS = 96;

export const FLAG_CLOSED = 1;
export const FLAG_DROPPED = 2;

// ---- agent records -----------------------------------------------------------------------------------------
/** 0: free; > 0: the token of the channel object holding it; < 0: minus the token of an agent cleaning it. */
export const R_OWNER = 0;
/** What the agent is about to move (R_STATE values below). */
export const R_STATE = 1;
/** The position it is about to claim (a send) or claimed the slot of (a receive), 32 bits. */
export const R_POS = 2;
/** The block: the one being sent, or the one a receive took out of its slot. */
export const R_PTR = 3;
/** Presence (see presence.ts): a word the owner keeps an `Atomics.waitAsync` on, never written. */
export const R_WAIT = 4;
/** 1 once the owner keeps its wait. */
export const R_ARMED = 5;
/** Pings sent to the owner, and its answers (it waits again after a ping woke it). */
export const R_PINGS = 6;
export const R_ANSWERS = 7;
/** When the last ping was sent (the low 31 bits of `Date.now()`). */
export const R_PINGED_AT = 8;
/**
 * Which parked count the owner is in (H_PARKED_SENDERS or H_PARKED_RECEIVERS, 0 for none): set after it adds itself
 * and cleared before it takes itself off, so that the cleaner of a dead owner takes off only a count that was added.
 */
export const R_PARKED = 9;
/**
 * A record's words 0 to 9 are written by its owner on every step; the rest is padding, so that two agents' records
 * never share a 64-byte cache line wherever the block lies (each step would otherwise pull the other's line).
 */
export const RECORD_WORDS = 32;

/** Nothing in flight. */
export const S_IDLE = 0;
/** A send about to claim R_POS with block R_PTR (also while it waits for room). */
export const S_SEND_INTENT = 1;
/** The send claimed R_POS: its block is the slot's (or about to be written there). */
export const S_SEND_CLAIMED = 2;
/**
 * A receive about to claim the slot of R_POS (R_PTR 0), or that claimed it: R_PTR is then the block it took out
 * (once read), until the receive hands it over and the record goes back to S_IDLE.
 */
export const S_RECV = 3;

// ---- slots -------------------------------------------------------------------------------------------------
export const SLOT_WORDS = 2;
export const SLOT_STAMP = 0;
export const SLOT_PTR = 1;
export const STAMP_BITS = 20;
export const STAMP_MASK = (1 << STAMP_BITS) - 1;
/** Records a channel may have: the claim field's 12 bits name index + 1. */
export const MAX_RECORDS = (1 << (32 - STAMP_BITS)) - 1;

export const MIN_CAPACITY = 2;
export const MAX_CAPACITY = 65536;
export const DEFAULT_CAPACITY = 256;
export const DEFAULT_RECORDS = 64;

/** Bytes of a channel block with `capacity` slots and `records` agent records. */
export function channelBytes(capacity: number, records: number): number {
  return (HEADER_WORDS + records * RECORD_WORDS + capacity * SLOT_WORDS) * 4;
}

/** The signed difference a - b of two 20-bit stamps. */
export function stampDiff(a: number, b: number): number {
  return ((a - b) << (32 - STAMP_BITS)) >> (32 - STAMP_BITS);
}
