/**
 * Paddock's stress programs, one per command: `node apps/stress/dist/main.js <program> [options]`.
 * Each program prints a report and a last line verdict, and exits 0 on pass, 1 on fail (2 on bad usage).
 * Programs: suspend-drain (memory freed across agents while the owners idle goes back to the OS), swarm
 * (seeded random runs checked against a ledger of every block; `--minutes N` soaks).
 * And departures (workers that end by themselves, are retired by a pool, or are terminated: memory comes back).
 */
import { DEPARTURES_USAGE, parseDeparturesArgs, runDepartures } from './departures.js';
import { SUSPEND_DRAIN_USAGE, parseSuspendDrainArgs, runSuspendDrain } from './suspend-drain.js';
import { SWARM_USAGE, parseSwarmArgs, runSwarm } from './swarm.js';

interface Program {
  summary: string;
  usage: string;
  run(args: string[]): Promise<number>;
}

const PROGRAMS: Record<string, Program> = {
  'suspend-drain': {
    summary: '8 workers x 32 x 512 KiB freed by one worker while the others idle: resident memory must fall, then climb back',
    usage: SUSPEND_DRAIN_USAGE,
    run: (args) => runSuspendDrain(parseSuspendDrainArgs(args)),
  },
  swarm: {
    summary: 'seeded random runs of 1-8 workers against a ledger of every block: patterns, kills and reaps, detaches; --minutes N soaks',
    usage: SWARM_USAGE,
    run: (args) => runSwarm(parseSwarmArgs(args), args),
  },
  departures: {
    summary: 'workers that end by themselves, are retired by a piscina pool, or are terminated: resident memory must come back to its baseline',
    usage: DEPARTURES_USAGE,
    run: (args) => runDepartures(parseDeparturesArgs(args)),
  },
};

function usage(): string {
  const lines = ['usage: node apps/stress/dist/main.js <program> [options]', 'programs:'];
  for (const [name, p] of Object.entries(PROGRAMS)) lines.push(`  ${name.padEnd(16)} ${p.summary}`);
  lines.push('`<program> --help` shows its options.');
  return lines.join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h') {
    console.log(usage());
    return name === undefined ? 2 : 0;
  }
  const program = PROGRAMS[name];
  if (program === undefined) {
    console.error(`unknown program ${JSON.stringify(name)}\n${usage()}`);
    return 2;
  }
  if (args.includes('--help') || args.includes('-h')) {
    console.log(program.usage);
    return 0;
  }
  try {
    return await program.run(args);
  } catch (e) {
    console.error(`${name}: ${e instanceof Error ? e.message : String(e)}\n${program.usage}`);
    return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
