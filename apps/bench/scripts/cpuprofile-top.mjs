// `node apps/bench/scripts/cpuprofile-top.mjs FILE.cpuprofile [N]`: the N functions with the most self time in a
// profile written by `node --cpu-prof` (one file per thread), as shares of the samples.
import { readFileSync } from 'node:fs';
const prof = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const self = new Map();
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const dt = new Map();
for (let i = 0; i < prof.samples.length; i++) dt.set(prof.samples[i], (dt.get(prof.samples[i]) ?? 0) + (prof.timeDeltas[i] ?? 0));
let total = 0;
for (const [id, t] of dt) {
  const n = byId.get(id);
  const f = n.callFrame;
  const key = `${f.functionName || '(anon)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`;
  self.set(key, (self.get(key) ?? 0) + t);
  total += t;
}
const rows = [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(process.argv[3] ?? 12));
for (const [k, t] of rows) console.log(`${((100 * t) / total).toFixed(1).padStart(5)}%  ${k}`);
