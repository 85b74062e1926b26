/**
 * What the departures program's parts tell each other (types, a few constants, an empty result): the scenarios, the
 * result line a scenario process prints, and the messages of its worker.
 */

/** The scenarios a scenario process runs, one per process. */
export const SCENARIOS = ['exit-idle', 'exit-quiet', 'piscina', 'terminate'] as const;
export type Scenario = (typeof SCENARIOS)[number];

/** What each scenario shows, as the report names it. */
export const SCENARIO_TITLES: Record<Scenario, string> = {
  'exit-idle': 'exit, main idling',
  'exit-quiet': 'exit, main not idling',
  piscina: 'piscina pool retires',
  terminate: 'terminate + watch',
};

/** The prefix of the one stdout line that carries a scenario's result (JSON after it). */
export const RESULT_PREFIX = 'departures-result ';

/** The piscina scenario's work: 50 tasks of 512 result blocks of 1 KiB (25 MiB in all). */
export const POOL_TASKS = 50;
export const POOL_BLOCKS_PER_TASK = 512;
export const POOL_BLOCK_BYTES = 1024;

/** What a scenario process measured. Byte figures are process-wide (RSS) or heap-wide (committed). */
export interface ScenarioResult {
  scenario: Scenario;
  /** Resident memory after the heap was made and settled, before any worker. */
  baseline: number;
  /** Resident memory while the payload was held (read by the worker itself, or by the main thread for the pool). */
  peak: number;
  /** Resident memory when the main thread saw the (last) worker's exit. */
  atExit: number;
  /** Resident memory `settleMs` after that. */
  after: number;
  settleMs: number;
  /** Payload the workers held at the peak. */
  payloadBytes: number;
  /** Blocks the workers allocated. */
  blocks: number;
  committedBaseline: number;
  committedPeak: number;
  committedAfter: number;
  /** The main thread's V8 heap (`process.memoryUsage().heapTotal`) at the baseline and at the end: part of RSS that is not Paddock's. */
  jsHeapBaseline: number;
  jsHeapAfter: number;
  /** The main agent's `stats()` at the end: live bytes of its arenas (and of arenas it took over), arenas, adopted slots. */
  mainLiveBytes: number;
  mainArenas: number;
  mainAdoptedSlots: number;
  mainCacheBytes: number;
  /** Arenas laid out in the whole heap at the end (null where the backend does not tell). */
  carvedArenas: number | null;
  /** Workers started, and how many had exited when measured. */
  workers: number;
  workersExited: number;
  /** Idle pool workers piscina had not retired after the grace, ended by destroying the pool (piscina). */
  poolKept: number;
  /** Result blocks whose contents were wrong (piscina). */
  damaged: number;
  /** What went wrong in the scenario process, if anything (the figures may then be partial). */
  error: string | null;
}

/** A result with nothing measured yet. */
export function emptyResult(scenario: Scenario): ScenarioResult {
  return {
    scenario,
    baseline: 0,
    peak: 0,
    atExit: 0,
    after: 0,
    settleMs: 0,
    payloadBytes: 0,
    blocks: 0,
    committedBaseline: 0,
    committedPeak: 0,
    committedAfter: 0,
    jsHeapBaseline: 0,
    jsHeapAfter: 0,
    mainLiveBytes: 0,
    mainArenas: 0,
    mainAdoptedSlots: 0,
    mainCacheBytes: 0,
    carvedArenas: null,
    workers: 0,
    workersExited: 0,
    poolKept: 0,
    damaged: 0,
    error: null,
  };
}

/** The workerData of the departures worker. */
export interface DepartureJob {
  handle: unknown;
  /** 'free-all-then-end': allocate, free everything, go idle, end by itself. 'hold-then-block': allocate and block until terminated. */
  job: 'free-all-then-end' | 'hold-then-block';
  bytes: number;
}

/** The departures worker's messages to its parent. */
export type DepartureMessage =
  | { kind: 'holding'; rss: number; committed: number; blocks: number; bytes: number; agentId: number }
  | { kind: 'freed'; rss: number; committed: number; liveBytes: number; cacheBytes: number };
