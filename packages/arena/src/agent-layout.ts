/**
 * The agent area's layout: constants only and no imports, so a bundler inlines them into the hot paths.
 *
 * The agent area: what a reaper must reach of one agent, kept in the shared buffer. Every agent that
 * attaches reserves one 64 KiB granule, commits its first 40 KiB and pushes it (one CAS) onto the heap's
 * list of agent areas. It holds the agent's thread cache, its chain map (pending cross-agent frees, per
 * owner slot) and its stash of oversized mappings, so that when a worker dies without detaching, another
 * agent can find and recover all three.
 *
 * Int32 words from the area's base:
 *   0 magic 'PAGT'   1 agent id   2 state (1 live, 2 detached, 3 reaped, 4 crashed, 5 vacant, 6 being claimed)
 *   3 owner slot (0: none)
 *   4 next area on the list   5 chain map address (the inline map until it grows)   6 chain map capacity
 *   7 stash entries   8..23 cache count per class   24..39 cache depth per class
 *   40 flush phase (1 while a chain is being pushed as a batch)   41 its owner   42 its objects
 *   43 a region being opened   44 an arena being laid out   45 a cached block being sent home (0 when none)
 *   46 the agent's thread key (Node: threadId + 1; 0 where the host has none), so a parent finds it by its Worker
 *   47 1 once the agent holds its agent lock (browsers: how others learn it is gone)   48..63 always zero (see G_ZERO)
 * Bytes 256 ...: cache stacks, 512 slots of 4 bytes per class.
 * Then the inline chain map (64 owners x [head, count]), then the stash (64 x [base, reservation KiB,
 * committed bytes]), then the head of the batch being flushed, then the drain in progress (see DRAIN_OFFSET), then
 * a move to or from the heap's exchange in progress (see EXCHANGE_OFFSET), then the agent's presence words (see
 * PRESENCE_OFFSET), then an oversized mapping being made or freed (see MAPPING_OFFSET).
 */
export const AGENT_MAGIC = 0x54474150 | 0; // 'PAGT'
export const AGENT_LIVE = 1;
export const AGENT_DETACHED = 2;
export const AGENT_REAPED = 3;
/** Its thread ended by an exception nobody caught: it did not detach, and waits to be reaped. */
export const AGENT_CRASHED = 4;
/**
 * Its agent has left and nothing reads the area any more (a detach or a reap finished): a new agent may
 * claim it (one CAS to {@link AGENT_CLAIMING}) instead of reserving another, so agents that come and go do
 * not grow the heap. Everything but the first page is decommitted.
 */
export const AGENT_VACANT = 5;
/** Claimed by a new agent that is still laying it out (it becomes live when done). */
export const AGENT_CLAIMING = 6;

export const G_MAGIC = 0;
export const G_AGENT_ID = 1;
export const G_STATE = 2;
export const G_OWNER_SLOT = 3;
export const G_NEXT = 4;
export const G_MAP_ADDR = 5;
export const G_MAP_CAP = 6;
export const G_STASH_COUNT = 7;
export const G_CACHE_COUNT = 8;
export const G_CACHE_DEPTH = 24;
export const G_FLUSH_PHASE = 40;
export const G_FLUSH_OWNER = 41;
export const G_FLUSH_COUNT = 42;
/** A region this agent is opening (reserved, not yet on the list), for a reaper. */
export const G_OPENING_REGION = 43;
/** An arena this agent carved and is laying out (no magic yet), or is giving back (no magic any more), for a reaper. */
export const G_OPENING_ARENA = 44;
/** A block the thread cache is sending home right now (off the cache, maybe not yet on a list), for a reaper. */
export const G_ROUTING = 45;
/** The agent's thread key (see `threadKey` in the platform layer). */
export const G_THREAD = 46;
/** 1 once the agent holds its Web Lock (browsers): only then may another agent wait on the lock. */
export const G_LOCK = 47;
/**
 * Sixteen words nobody ever writes: a heap object that has left points its cache counts and depths here, so its
 * inlined malloc and free find an empty cache that takes nothing (the area itself may belong to another agent
 * by then). The first page is never decommitted, and a new layout zeroes it again.
 */
export const G_ZERO = 48;

/** Slots per class in the cache stacks (the profile's deepest cache). */
export const CACHE_STRIDE = 512;
export const CACHE_STACKS_OFFSET = 256;
export const INLINE_MAP_OFFSET = CACHE_STACKS_OFFSET + 16 * CACHE_STRIDE * 4;
/** Owners the inline chain map holds before it grows. */
export const INLINE_MAP_OWNERS = 64;
export const STASH_OFFSET = INLINE_MAP_OFFSET + INLINE_MAP_OWNERS * 8;
/** Oversized mappings one agent may hold stashed. */
export const STASH_CAPACITY = 64;
/** The head of the batch being flushed (while the flush phase is 1): a reaper sends its objects home. */
export const FLUSH_HEAD_OFFSET = STASH_OFFSET + STASH_CAPACITY * 12;
/**
 * The drain in progress, for a reaper: [the queue of batches taken from an inbox and not begun (0: none), the
 * next object of the batch being reclaimed, how many of its objects are left]. A drain takes a whole inbox with
 * one exchange into this queue; without these words, an agent stopped half way would leave the rest of it
 * reachable from nowhere. The allocation's drain reclaims only as many batches as its class needs: the rest
 * wait in the queue for the next.
 */
export const DRAIN_OFFSET = FLUSH_HEAD_OFFSET + 4;
export const D_RUN = 0;
export const D_CUR = 1;
export const D_LEFT = 2;
/**
 * A move between this agent's cache and the heap's exchange, for a reaper: [the slot's Int32 index (0: none), the
 * class's cache count before the move (-1: the agent is emptying the slot)] (see exchange.ts).
 */
export const EXCHANGE_OFFSET = DRAIN_OFFSET + 12;
/**
 * The agent's presence, how a reaper tells a live agent from a gone one: [the word its agent keeps an
 * `Atomics.waitAsync` on for as long as it is attached (always 0), 1 once it keeps that wait, pings that woke it,
 * pings it answered (re-arming its wait), when the last ping woke it (ms, low 31 bits of `Date.now()`)]. A
 * thread's async waits go with its thread, so an `Atomics.notify` of the word that wakes nobody says the thread
 * is gone (see the allocator's presence.ts).
 */
export const PRESENCE_OFFSET = EXCHANGE_OFFSET + 8;
export const P_WAIT = 0;
export const P_ARMED = 1;
export const P_PINGS = 2;
export const P_ANSWERS = 3;
export const P_PINGED_AT = 4;
/**
 * An oversized mapping in the middle of an operation, for a reaper: [its base | what (0: none; the base is 64 KiB
 * aligned, `what` in the low bits: 1 being made, reserved and its header not yet whole; 2 moving between live and
 * stashed, in neither the stash nor the user's hands: being freed, or taken from the stash), its reservation in KiB
 * (for one being made)] (see the large tier's reapStash).
 */
export const MAPPING_OFFSET = PRESENCE_OFFSET + 20;
export const MP_BASE = 0;
export const MP_KIB = 1;
export const MP_MAKING = 1;
export const MP_MOVING = 2;
export const AGENT_AREA_COMMIT = Math.ceil((MAPPING_OFFSET + 8) / 4096) * 4096;
