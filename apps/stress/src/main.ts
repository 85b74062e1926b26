/**
 * Paddock's stress programs, one per command: `node apps/stress/dist/main.js <program> [options]`.
 * Each program prints a report and a last line verdict, and exits 0 on pass, 1 on fail (2 on bad usage).
 * Programs: suspend-drain (memory freed across agents while the owners idle goes back to the OS), swarm
 * (seeded random runs checked against a ledger of every block; `--minutes N` soaks).
 * And departures (workers that end by themselves, are retired by a pool, or are terminated: memory comes back),
 * and channel-swarm (blocks through a channel while its producers and consumers are killed and depart).
 */
import { channelSwarm } from './channel-swarm.js';
import { departures } from './departures.js';
import type { StressProgram } from './program.js';
import { suspendDrain } from './suspend-drain.js';
import { swarm } from './swarm.js';

/**
 * The programs, in the order the usage lists them. A new program: its module, which exports a
 * `StressProgram` (its worker scripts, named `*-worker.ts`, `*-scenario.ts` or `*-task.ts`, are built
 * beside main.js without further ado), and its line here.
 */
const PROGRAMS: readonly StressProgram[] = [suspendDrain, swarm, departures, channelSwarm];

function usage(): string {
  const lines = ['usage: node apps/stress/dist/main.js <program> [options]', 'programs:'];
  for (const p of PROGRAMS) lines.push(`  ${p.name.padEnd(16)} ${p.summary}`);
  lines.push('`<program> --help` shows its options.');
  return lines.join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined || name === '--help' || name === '-h') {
    console.log(usage());
    return name === undefined ? 2 : 0;
  }
  const program = PROGRAMS.find((p) => p.name === name);
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
