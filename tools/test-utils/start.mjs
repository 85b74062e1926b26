// Start barrier for test workers: report ready, sleep until the main thread says go, then spin until
// every worker is awake, so their work really overlaps. (Atomics.wait is fine in test workers.)
export function startTogether(sync, count) {
  const flags = new Int32Array(sync);
  Atomics.add(flags, 0, 1);
  while (Atomics.load(flags, 1) === 0) Atomics.wait(flags, 1, 0, 20);
  Atomics.add(flags, 2, 1);
  while (Atomics.load(flags, 2) < count);
}

/** A spinning barrier on word `word` of the sync buffer. */
export function barrier(sync, word, count) {
  const flags = new Int32Array(sync);
  Atomics.add(flags, word, 1);
  while (Atomics.load(flags, word) < count);
}

/**
 * Round barrier: returns once all `count` workers have reached round `round` (0, 1, 2, ...), counted in
 * word `word`. Calling it before each step makes every worker's step i start together.
 */
export function round(sync, word, count, round) {
  const flags = new Int32Array(sync);
  Atomics.add(flags, word, 1);
  const target = (round + 1) * count;
  while (Atomics.load(flags, word) < target);
}
