// The native peers draw what the JavaScript peers draw: the C file's generator and draws (`rnext`,
// `between`, `log_uniform` in native/programs.c) against the repository's one generator and the bench's
// draws (src/draws.ts), seed for seed, over the ranges the workloads use. Skipped where there is no `cc`.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { between, logUniform, mulberry32 } from '../src/draws.js';

const PROGRAMS_C = fileURLToPath(new URL('../native/programs.c', import.meta.url));
const SEEDS = [0, 1, 0x5eed, 0x9c0ffee, 0x1a2503, 0xdeadbeef];
const DRAWS = 5000;
/** [lo, hi] of the uniform draws and of the log-uniform draws the workloads and programs make. */
const UNIFORM: readonly [number, number][] = [[16, 4096], [0, 65535], [8, 1000], [8, 64]];
const LOG_UNIFORM: readonly [number, number][] = [[16, 65536], [4, 32768], [16, 16000]];

const hasCc = spawnSync('cc', ['--version']).status === 0;
const dir = mkdtempSync(join(tmpdir(), 'bench-draws-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Builds a harness around the C file's draws; it prints one line of draws per (kind, seed, range). */
function nativeDraws(): string[] {
  const harness = join(dir, 'draws.c');
  const ranges = (rs: readonly [number, number][]) => rs.map(([lo, hi]) => `{${lo}, ${hi}}`).join(', ');
  writeFileSync(
    harness,
    `#define main programs_main
#include "${PROGRAMS_C}"
#undef main
static const long long seeds[] = {${SEEDS.join(', ')}LL};
static const long uni[][2] = {${ranges(UNIFORM)}};
static const long logu[][2] = {${ranges(LOG_UNIFORM)}};
int main(void) {
  for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
    rng_t r = {(uint32_t)seeds[i]};
    for (int k = 0; k < ${DRAWS}; k++) printf("%u ", rnext(&r));
    printf("\\n");
    for (size_t j = 0; j < sizeof uni / sizeof uni[0]; j++) {
      rng_t u = {(uint32_t)seeds[i]};
      for (int k = 0; k < ${DRAWS}; k++) printf("%ld ", between(&u, uni[j][0], uni[j][1]));
      printf("\\n");
    }
    for (size_t j = 0; j < sizeof logu / sizeof logu[0]; j++) {
      rng_t u = {(uint32_t)seeds[i]};
      for (int k = 0; k < ${DRAWS}; k++) printf("%ld ", log_uniform(&u, logu[j][0], logu[j][1]));
      printf("\\n");
    }
  }
  return 0;
}
`,
  );
  const bin = join(dir, 'draws');
  const cc = spawnSync('cc', ['-O2', '-pthread', '-w', '-o', bin, harness, '-lm'], { encoding: 'utf8' });
  if (cc.status !== 0) throw new Error(`cc failed: ${cc.stderr}`);
  const run = spawnSync(bin, [], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (run.status !== 0) throw new Error(`the harness failed: ${run.stderr}`);
  return run.stdout.trim().split('\n').map((l) => l.trim());
}

/** The same lines, drawn in JavaScript. */
function jsDraws(): string[] {
  const lines: string[] = [];
  const line = (draw: () => number) => Array.from({ length: DRAWS }, draw).join(' ');
  for (const seed of SEEDS) {
    const next = mulberry32(seed);
    lines.push(line(next));
    for (const [lo, hi] of UNIFORM) {
      const u = mulberry32(seed);
      lines.push(line(() => between(u, lo, hi)));
    }
    for (const [lo, hi] of LOG_UNIFORM) {
      const u = mulberry32(seed);
      lines.push(line(() => logUniform(u, lo, hi)));
    }
  }
  return lines;
}

describe('the native peers draw the same sequences', () => {
  it.skipIf(!hasCc)('rnext, between and log_uniform in C give what mulberry32, between and logUniform give', () => {
    const c = nativeDraws();
    const js = jsDraws();
    expect(c.length).toBe(js.length);
    for (let i = 0; i < js.length; i++) expect(c[i], `line ${i}`).toBe(js[i]);
  });
});
