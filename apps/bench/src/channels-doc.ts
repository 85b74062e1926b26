/**
 * `node apps/bench/dist/channels-doc.js [--json apps/bench/results/latest.json] [--out docs/PERFORMANCE.md]`:
 * writes the `channels` group's section ("## Channels") of a run into the page, replacing the one there or
 * adding it before "## Calls from WebAssembly", and leaves the rest of the page as it is: a run of the group
 * alone (`--only channels`) updates its section without regenerating the page. `pnpm bench:report` writes
 * the same section from a full run's JSON.
 */
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { APP } from './toolchain.js';
import { channelsSection } from './workloads/channels-section.js';
import type { ChannelsJson } from './workloads/channels-report.js';

/** The kept notes the section carries after its figures. */
export const CHANNELS_NOTES = join(APP, 'report', 'channels-notes.md');

const argv = process.argv.slice(2);
const opt = (k: string, d: string) => {
  const i = argv.indexOf(k);
  return i >= 0 && argv[i + 1] !== undefined ? resolve(argv[i + 1]!) : d;
};
const json = opt('--json', join(APP, 'results', 'latest.json'));
const out = opt('--out', join(APP, '..', '..', 'docs', 'PERFORMANCE.md'));
const doc = JSON.parse(readFileSync(json, 'utf8')) as { channels?: ChannelsJson; config: { mode: string } };
if (!doc.channels) {
  process.stderr.write(`channels-doc: ${json} has no channels group (run --only channels)\n`);
  process.exit(1);
}
// The run's JSON is kept beside the charts, so the section can be regenerated and checked.
const kept = join(APP, 'report', 'channels.json');
if (resolve(json) !== kept) copyFileSync(json, kept);
const rerun = `node apps/bench/dist/main.js${doc.config.mode === 'full' ? ' --full' : ''} --only channels`;
const notes = existsSync(CHANNELS_NOTES) ? readFileSync(CHANNELS_NOTES, 'utf8') : null;
const from = `From [\`apps/bench/report/channels.json\`](${relative(join(out, '..'), kept).split('\\').join('/')}), a run of \`${(doc as { command?: string }).command ?? rerun}\` written in by \`node apps/bench/dist/channels-doc.js\`.`;
const lines = channelsSection(doc.channels, rerun, notes);
const section = [...lines.slice(0, 2), from, '', ...lines.slice(2)].join('\n');
const page = readFileSync(out, 'utf8');
const start = page.indexOf('\n## Channels\n');
let next: string;
if (start >= 0) {
  const end = page.indexOf('\n## ', start + 1);
  next = `${page.slice(0, start + 1)}${section}${end >= 0 ? page.slice(end) : '\n'}`;
} else {
  const at = page.indexOf('\n## Calls from WebAssembly');
  next = at >= 0 ? `${page.slice(0, at + 1)}${section}${page.slice(at)}` : `${page.trimEnd()}\n\n${section}\n`;
}
writeFileSync(out, next);
process.stdout.write(`channels-doc: wrote the Channels section of ${out} from ${json}\n`);
