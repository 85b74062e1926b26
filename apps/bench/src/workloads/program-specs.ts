/**
 * The programs and their sizes: the Pony arena's own programs re-created (group `pony`), the classic pool's
 * pathologies (`pathology`) and the standard allocator workloads, mimalloc-bench's shapes re-implemented
 * for workers (`standard`). Each spec says how many agents run it, its parameters, what its figure is and
 * what it does; the JavaScript forms are in `programs-paddock.ts` and `programs-js.ts` (agents) and in
 * `single.ts` (one agent), the C twins in `native/programs.c`.
 */

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;

export type Metric = 'rate' | 'ms' | 'bytes';

export interface ProgramSpec {
  readonly name: string;
  /** The program the worker and the C file know it by. */
  readonly program: string;
  readonly group: 'pony' | 'pathology' | 'standard';
  /** 0: single-agent (main thread, adapters). */
  readonly agents: number;
  readonly params: Readonly<Record<string, number>>;
  /** Main sets the stop word after params.ms; otherwise the program does a fixed amount of work. */
  readonly timed: boolean;
  /** What the figure is: a rate (higher is better), a time in ms or bytes (lower is better). */
  readonly metric: Metric;
  readonly unit: string;
  /** Which agents' ops count: all, or the last one (the consumer). */
  readonly opsFrom: 'all' | 'last';
  readonly js: boolean;
  readonly heapBytes: number;
  readonly rings: readonly number[];
  readonly sharedBytes: number;
  readonly what: string;
}

export interface ModeSizes {
  readonly ms: number;
  readonly full: boolean;
}

/** The programs, sized for this machine (2 cores: 2 agents, 3 for producer-consumer). */
export function programSpecs(m: ModeSizes): ProgramSpec[] {
  const ms = m.ms;
  const f = m.full;
  const base = { timed: true, metric: 'rate' as Metric, opsFrom: 'all' as const, js: false, heapBytes: GiB, rings: [] as number[], sharedBytes: 0 };
  const specs: ProgramSpec[] = [
    {
      ...base,
      name: 'binary-trees',
      program: 'binary-trees',
      group: 'pony',
      agents: 2,
      timed: false,
      js: true,
      params: { depth: f ? 16 : 13 },
      unit: 'nodes/s',
      what: 'build and hold a deep tree of 32 B nodes: agent 0 builds a stretch tree of depth D+1 and a long-lived one of depth D; the 2^(D-d+4) trees of each depth d = 4..D (step 2) are shared out between the agents, each built, walked and freed',
    },
    {
      ...base,
      name: 'binary-trees-1',
      program: 'binary-trees',
      group: 'pony',
      agents: 0,
      timed: false,
      js: true,
      params: { depth: f ? 12 : 10 },
      unit: 'nodes/s',
      what: 'binary-trees with one agent, every in-process peer',
    },
    {
      ...base,
      name: 'producer-consumer',
      program: 'producer-consumer',
      group: 'pony',
      agents: 3,
      opsFrom: 'last',
      js: true,
      params: { producers: 2, batch: 32, min: 4096, max: 4096, ms },
      rings: [1024, 1024],
      unit: 'payloads/s',
      what: '2 producers allocate 4 KiB payloads (first and last word written) and hand them over in batches of 32 through a ring each; 1 consumer checks and frees them',
    },
    {
      ...base,
      name: 'message-ubench',
      program: 'message-ubench',
      group: 'pony',
      agents: 2,
      js: true,
      params: { window: 64, size: 64, ms },
      rings: [128, 128],
      unit: 'messages/s',
      what: '2 agents ping-pong 64 B messages, 64 in flight: each message received is read and freed, and answered with a new one',
    },
    ...[
      [16, 8],
      [128, 32],
      [512, 64],
    ].map(
      ([burst, scratch]): ProgramSpec => ({
        ...base,
        name: `mixed-churn-${burst}/${scratch}`,
        program: 'mixed-churn',
        group: 'pony',
        agents: 2,
        js: true,
        params: { burst, scratch, inflight: 2, ms },
        rings: [3 * burst, 3 * burst],
        unit: 'blocks/s',
        what: `a ring of 2 agents: each frees an incoming burst of ${burst} of the other's 4 KiB blocks, allocates ${scratch} 4 KiB scratch blocks, sends a burst of ${burst} new blocks on, then frees its scratch (2 bursts in flight per agent)`,
      }),
    ),
    ...[
      ['idle-100m', 100 * MiB, GiB],
      ['idle-1g', GiB, 2 * GiB],
    ].map(
      ([name, bytes, heap]): ProgramSpec => ({
        ...base,
        name: name as string,
        program: 'idle',
        group: 'pony',
        agents: 2,
        timed: false,
        js: true,
        metric: 'ms',
        heapBytes: heap as number,
        params: { bytes: bytes as number, block: 512 * KiB, count: (bytes as number) / (512 * KiB), window: f ? 5000 : 2000, sample: 2 },
        sharedBytes: ((bytes as number) / (512 * KiB)) * 4,
        unit: 'ms to return half',
        what: `agent A allocates ${(bytes as number) >= GiB ? '1 GiB' : '100 MiB'} in 512 KiB blocks and writes every page; agent B frees them all; both go idle (Paddock: startIdle, the idle tick; C: the threads sleep; JS: nothing to do). Resident memory is sampled every 2 ms from B's last free: the time until it fell by half the payload, and by 90% (each the time of the first sample past it, so at most one interval late)`,
      }),
    ),
    {
      ...base,
      name: 'large-cross-free',
      program: 'large-cross-free',
      group: 'pathology',
      agents: 2,
      timed: false,
      heapBytes: 2 * GiB,
      params: { rounds: 100, size: 4 * MiB },
      rings: [2],
      unit: 'rounds/s',
      what: 'a large block freed on another agent: 100 rounds of A allocating 4 MiB and writing every page, B freeing it (Paddock: and flush()ing), at most 2 in flight; distinct addresses and peak memory are the point',
    },
    {
      ...base,
      name: 'class-no-reuse',
      program: 'class-no-reuse',
      group: 'pathology',
      agents: 0,
      timed: false,
      js: true,
      metric: 'bytes',
      params: { bytes: f ? 64 * MiB : 32 * MiB, a: 64, b: 1024, c: 16384 },
      unit: 'peak RSS',
      what: 'memory of one size class never serving another: the same bytes allocated (every page written) and freed in 64 B blocks, then 1 KiB, then 16 KiB; peak resident memory against the bytes',
    },
    {
      ...base,
      name: 'build-then-free',
      program: 'build-then-free',
      group: 'pathology',
      agents: 0,
      timed: false,
      heapBytes: 2 * GiB,
      params: { blocks: 64000, min: 16, max: 20000, rounds: 3, seed: 0xb7f },
      unit: 'ops/s',
      what: 'a structure built, then freed whole: 64,000 blocks of 16..20,000 B (uniform) allocated one after another, then all freed in random order, three times on one heap, nothing written into the blocks; one op is a malloc or a free, and the ns per malloc and per free are shown apart',
    },
    ...[4096, 16384, 65536].map(
      (live): ProgramSpec => ({
        ...base,
        name: `mixed-sizes-${live / 1024}k`,
        program: 'mixed-sizes',
        group: 'pathology',
        agents: 2,
        js: true,
        heapBytes: live >= 65536 ? 2 * GiB : GiB,
        params: { live, min: 16, max: 65536, seed: 0x5eed, ms },
        unit: 'ops/s',
        what: `mixed sizes at ${live / 1024}k blocks: ${live / 1024}k live blocks (half per agent) of log-uniform sizes 16 B..64 KiB, each step frees a random one of the agent's blocks and allocates a new size`,
      }),
    ),
    {
      ...base,
      name: 'larson',
      program: 'larson',
      group: 'standard',
      agents: 2,
      params: { slots: 1000, min: 8, max: 1000, round: 10000, ms },
      sharedBytes: 3 * 1000 * 4,
      unit: 'ops/s',
      what: 'larson (bench.sh: larson 5 8 1000 5000 100 4141 N), scaled: each agent replaces random blocks (8..1000 B) in an array of 1,000; every 10,000 steps it swaps its array for the one in a mailbox (3 arrays, 2 agents), so most frees are of another agent\'s blocks',
    },
    {
      ...base,
      name: 'xmalloc-test',
      program: 'xmalloc-test',
      group: 'standard',
      agents: 2,
      opsFrom: 'last',
      params: { producers: 1, batch: 32, min: 8, max: 64, ms },
      rings: [1024],
      unit: 'blocks/s',
      what: 'xmalloc-test (bench.sh: xmalloc-test -w N -t 5 -s 64), scaled: one agent allocates blocks of 8..64 B in batches of 32, the other frees them',
    },
    {
      ...base,
      name: 'mstress',
      program: 'mstress',
      group: 'standard',
      agents: 2,
      timed: false,
      params: { scale: f ? 100 : 50, iterations: f ? 20 : 8 },
      sharedBytes: 1000 * 4,
      unit: 'ops/s',
      what: 'mimalloc-bench stress (bench.sh: mstress N 50 25), scaled: per iteration each agent allocates 100*scale*(id+1) objects of 8..128 B (1% 10x larger, rare 32 KiB), retains half of as many more, frees 66% of the time, and swaps a random object with a 1,000-slot shared transfer array 25% of the time',
    },
    {
      ...base,
      name: 'rptest',
      program: 'rptest',
      group: 'standard',
      agents: 2,
      params: { count: 1000, opcount: 100, cross: 8, min: 16, max: 16000, ms },
      rings: [4096, 4096],
      unit: 'ops/s',
      what: 'rptest (bench.sh: rptest N 0 1 2 500 1000 100 8 16000), scaled: each loop allocates 1,000 blocks of 16..16000 B (log-uniform), replaces 100 at random, then frees them, except every 8th loop hands the set to the next agent to free',
    },
    {
      ...base,
      name: 'glibc-thread',
      program: 'glibc-thread',
      group: 'standard',
      agents: 2,
      js: true,
      params: { live: 8000, min: 4, max: 32768, seed: 0x5eed, ms },
      unit: 'ops/s',
      what: 'glibc bench-malloc-thread (bench.sh: glibc-thread N), scaled: each agent keeps 4,000 blocks of 4 B..32 KiB (log-uniform) and replaces a random one per step; no cross-agent frees',
    },
    {
      ...base,
      name: 'cache-scratch',
      program: 'cache-scratch',
      group: 'standard',
      agents: 2,
      timed: false,
      params: { iterations: 1000, objsize: 8, reps: f ? 20000 : 4000 },
      sharedBytes: 2 * 4,
      unit: 'objects/s',
      what: 'cache-scratch (bench.sh: cache-scratch 1 1000 1 2000000 N), scaled: the main thread allocates one 8 B object per agent; each agent frees it, then 1,000 times allocates an 8 B object, writes it reps times and frees it (passive false sharing)',
    },
  ];
  return specs;
}
