/**
 * The command line: the two modes (quick, the default, and `--full`: how many rounds, how long the
 * sequences, how long a peer may take), the options, and the usage text.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { peerNames, workloadNames } from './selection.js';

export interface Mode {
  readonly name: 'quick' | 'full';
  readonly rounds: number;
  readonly warmup: number;
  readonly pairOps: number;
  readonly churnOps: (live: number) => number;
  /** Time a peer may spend in one round of one workload; a slower peer runs a prefix. */
  readonly budgetMs: number;
  /** hold, cross-32 and realloc: warm-up and measured rounds (unless --warmup / --rounds say otherwise). */
  readonly memWarmup: number;
  readonly memRounds: number;
  /** hold: hold/free cycles a round. */
  readonly holdCycles: number;
  /** cross-32: how long the producer produces, a round. */
  readonly crossMs: number;
  /** realloc: chains a round. */
  readonly chains: number;
  /** The programs: how long a timed program runs, its warm-up and measured rounds, the idle rounds. */
  readonly programMs: number;
  readonly programWarmup: number;
  readonly programRounds: number;
  readonly idleRounds: number;
  /** A fixed-work program run longer than this drops the peer from that program. */
  readonly programCapMs: number;
}

export const QUICK: Mode = {
  name: 'quick',
  rounds: 5,
  warmup: 2,
  pairOps: 1_000_000,
  churnOps: (live) => Math.max(200_000, 4 * live),
  budgetMs: 250,
  memWarmup: 1,
  memRounds: 5,
  holdCycles: 8,
  crossMs: 300,
  chains: 6,
  programMs: 150,
  programWarmup: 1,
  programRounds: 4,
  idleRounds: 2,
  programCapMs: 15_000,
};

export const FULL: Mode = {
  name: 'full',
  rounds: 21,
  warmup: 3,
  pairOps: 4_000_000,
  churnOps: (live) => Math.max(1_000_000, 16 * live),
  budgetMs: 1000,
  memWarmup: 2,
  memRounds: 11,
  holdCycles: 32,
  crossMs: 1000,
  chains: 16,
  programMs: 1000,
  programWarmup: 2,
  programRounds: 11,
  idleRounds: 5,
  programCapMs: 60_000,
};

export interface Options {
  mode: Mode;
  rounds: number;
  warmup: number;
  /** --rounds / --warmup as given (-1: the mode's, per workload). */
  roundsGiven: number;
  warmupGiven: number;
  only: string[] | null;
  json: string;
  seed: number;
  verify: boolean;
  strict: boolean;
  touch: boolean;
  /** --capacity-doc: the capacity workload also writes its table to docs/CAPACITY.md. */
  capacityDoc: boolean;
}

/** A workload's warm-up or measured rounds: as given on the command line, or the mode's figure for it. */
export function roundsOr(given: number, modes: number): number {
  return given >= 1 ? given : modes;
}

/** `lead` then `text`, broken at spaces into lines of at most `width` characters, the later ones indented like the first. */
function wrap(lead: string, text: string, width: number): string {
  const lines: string[] = [];
  let line = lead;
  for (const word of text.split(' ')) {
    if (line !== lead && line.length + 1 + word.length > width) {
      lines.push(line);
      line = ' '.repeat(lead.length) + word;
    } else line = line === lead ? lead + word : `${line} ${word}`;
  }
  return [...lines, line].join('\n');
}

export function usage(): string {
  const only = wrap('  --only LIST   ', `peers (${peerNames().join(', ')}) and/or workloads (${workloadNames().join(', ')})`, 118);
  return `usage: node apps/bench/dist/main.js [--full] [--rounds N] [--warmup N] [--only name,name]
                                   [--json path] [--seed N] [--verify] [--strict] [--no-touch] [--capacity-doc]
  --full        ${FULL.rounds} rounds, longer sequences, ${FULL.budgetMs} ms cap per peer and round (default: quick, ${QUICK.rounds} rounds, ${QUICK.budgetMs} ms)
  --rounds N    measured rounds (after the warm-up rounds)
  --warmup N    warm-up rounds, at least 1 (the first one calibrates the time cap)
${only}
  --json PATH   where the JSON goes (default apps/bench/results/latest.json)
  --seed N      PRNG seed of the operation sequences
  --verify      run the long self-check on every peer and exit
  --strict      exit 1 when a Paddock target is NOT MET
  --no-touch    leave the prefilled blocks untouched (the timed churn then pays the first touch of
                their pages)
  --capacity-doc  the capacity workload (--only capacity) also writes its table to docs/CAPACITY.md`;
}

/** Says what is wrong with the command line, shows the usage, and exits 2. */
export function fail(message: string): never {
  process.stderr.write(`bench: ${message}\n${usage()}\n`);
  process.exit(2);
}

export function parseArgs(argv: string[]): Options {
  const defaultJson = fileURLToPath(new URL('../results/latest.json', import.meta.url));
  const o: Options = {
    mode: QUICK,
    rounds: -1,
    warmup: -1,
    roundsGiven: -1,
    warmupGiven: -1,
    only: null,
    json: defaultJson,
    seed: 0x5eed,
    verify: false,
    strict: false,
    touch: true,
    capacityDoc: false,
  };
  const int = (name: string, v: string | undefined, min: number): number => {
    const n = Number(v);
    if (v === undefined || !Number.isInteger(n) || n < min) fail(`${name} needs an integer >= ${min}, got ${v}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i];
    let value: string | undefined;
    const eq = arg.indexOf('=');
    if (arg.startsWith('--') && eq > 0) {
      value = arg.slice(eq + 1);
      arg = arg.slice(0, eq);
    }
    const take = () => value ?? argv[++i];
    switch (arg) {
      case '--full':
        o.mode = FULL;
        break;
      case '--rounds':
        o.rounds = int(arg, take(), 1);
        break;
      case '--warmup':
        o.warmup = int(arg, take(), 1);
        break;
      case '--only': {
        const v = take();
        if (!v) fail('--only needs a list of names');
        o.only = v.split(',').map((s) => s.trim()).filter(Boolean);
        break;
      }
      case '--json': {
        const v = take();
        if (!v) fail('--json needs a path');
        o.json = resolve(v);
        break;
      }
      case '--seed':
        o.seed = int(arg, take(), 0);
        break;
      case '--verify':
        o.verify = true;
        break;
      case '--strict':
        o.strict = true;
        break;
      case '--no-touch':
        o.touch = false;
        break;
      case '--capacity-doc':
        o.capacityDoc = true;
        break;
      case '--help':
      case '-h':
        process.stdout.write(`${usage()}\n`);
        process.exit(0);
        break;
      default:
        fail(`unknown option ${argv[i]}`);
    }
  }
  o.roundsGiven = o.rounds;
  o.warmupGiven = o.warmup;
  if (o.rounds < 0) o.rounds = o.mode.rounds;
  if (o.warmup < 0) o.warmup = o.mode.warmup;
  return o;
}
