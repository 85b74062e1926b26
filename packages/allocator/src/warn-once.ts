/**
 * The default for errors of a heap object's background work (the idle tick, a reap a watch starts) when nobody set
 * `onError`: a console warning, once per error code per heap object (heap-base.ts hands them here).
 */
import { HeapError } from '@paddock/platform';
import type { BackgroundWork } from './types.js';

/** Per heap object: the codes the default has warned of. */
const warnedCodes = new WeakMap<object, Set<string>>();

/** An error's code for a message: a HeapError's code, else the error's name. */
function errorCode(err: unknown): string {
  if (err instanceof HeapError) return err.code;
  return err instanceof Error ? err.name : typeof err;
}

/**
 * What happens to an error of background work nobody set a handler for: a warning on the console, once per error
 * code per heap object (a tick that keeps failing would otherwise say it twice a second). The process goes on.
 */
export function warnOnce(heap: object, err: unknown, during: BackgroundWork, agentId: number): void {
  let codes = warnedCodes.get(heap);
  if (codes === undefined) warnedCodes.set(heap, (codes = new Set()));
  const code = errorCode(err);
  if (codes.has(code)) return;
  codes.add(code);
  const message = err instanceof Error ? err.message : String(err);
  console.warn(`paddock: ${during} of agent ${agentId} failed (${code}): ${message}; the heap goes on (set heap.onError to handle these; this is said once per code)`);
}
