import { Worker } from 'node:worker_threads';
import { createAddressSpace, type AddressSpace, type AddressSpaceOptions } from '@paddock/platform';
import { ClassicPool, type ClassicPoolOptions } from '../src/index.js';

export const KiB = 1024;
export const MiB = 1024 * KiB;
export const GiB = 1024 * MiB;

/** A fresh address space with a classic pool in it. */
export function makePool(options: ClassicPoolOptions = {}, space: AddressSpaceOptions = { maxBytes: GiB }): { space: AddressSpace; pool: ClassicPool } {
  const s = createAddressSpace(space);
  return { space: s, pool: ClassicPool.create(s, options) };
}

/** The size ladder every contract test walks: every class boundary and its neighbours, up to 3 MiB. */
export function sizeLadder(): number[] {
  const sizes = new Set<number>([0, 1, 7, 8, 16, 31, 32, 33]);
  for (let k = 6; k <= 21; k++) for (const d of [-1, 0, 1]) sizes.add(2 ** k + d);
  for (const s of [3 * MiB - 1, 3 * MiB, 1.5 * MiB, 2 * MiB + 4095]) sizes.add(s);
  return [...sizes].sort((a, b) => a - b);
}

/** Whether [a, a + an) and [b, b + bn) overlap. */
export function overlaps(a: number, an: number, b: number, bn: number): boolean {
  return a < b + bn && b < a + an;
}

/** Expects `fn` to throw a HeapError with `code`; returns the error. */
export function heapErrorOf(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error('expected a HeapError, nothing was thrown');
}

interface Reply {
  id: number;
  ok: boolean;
  value: unknown;
  error?: { name: string; code?: string; message: string };
}

/** A pool agent in a real worker (test/workers/agent.mjs), called op by op. */
export class WorkerAgent {
  private readonly worker: Worker;
  private seq = 0;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();

  constructor(space: AddressSpace) {
    this.worker = new Worker(new URL('./workers/agent.mjs', import.meta.url), { workerData: { handle: space.handle } });
    this.worker.on('message', (m: Reply) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.ok) p.resolve(m.value);
      else p.reject(Object.assign(new Error(m.error!.message), { name: m.error!.name, code: m.error!.code }));
    });
    this.worker.on('error', (err) => {
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    });
  }

  call<T = unknown>(op: string, ...args: unknown[]): Promise<T> {
    const id = ++this.seq;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.postMessage({ id, op, args });
    });
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}
