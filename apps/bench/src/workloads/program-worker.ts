/**
 * One agent of the multi-agent programs, in a worker (`program-runs.ts` starts them). A worker is started
 * once per mode (and Paddock backend) and runs many rounds: each round the main thread sends `run` with a
 * fresh heap handle (paddock) or fresh ports (js), the agents meet at a barrier, run their part of the
 * program (`programs-paddock.ts`, `programs-js.ts`), and report.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { AttachHeap, PaddockHeap } from '../peers/paddock-heap.js';
import { type CpuSplit, type Recording, startProfile, stopProfile } from './cpu-split.js';
import { type Agent, idleSignal } from './program-agent.js';
import { K_ABORT, K_GO, type ProgramReport, type ProgramRun, type WorkerMode } from './program-protocol.js';
import { JS_PROGRAMS } from './programs-js.js';
import { PADDOCK_PROGRAMS } from './programs-paddock.js';

const data = workerData as { mode: WorkerMode; url: string | null };
let attachHeap: AttachHeap | null = null;
if (data.mode === 'paddock') {
  attachHeap = ((await import(data.url as string)) as { attachHeap: AttachHeap }).attachHeap;
}

parentPort!.on('message', (m: ProgramRun | { cmd: 'signal'; what: string } | { cmd: 'exit' }) => {
  if (m.cmd === 'exit') {
    parentPort!.close();
    return;
  }
  if (m.cmd === 'signal') {
    idleSignal.on?.(m.what);
    return;
  }
  void runOne(m);
});

async function runOne(m: ProgramRun): Promise<void> {
  const ctl = new Int32Array(m.ctl);
  let heap: PaddockHeap | null = null;
  const a: Agent = { m, ctl, heap: null, p: m.params, ops: 0, bad: 0, t0: 0, t1: 0, extra: {} };
  let error: string | null = null;
  let recording: Recording | null = null;
  let cpu: CpuSplit | null = null;
  try {
    if (data.mode === 'paddock') {
      heap = attachHeap!(m.handle!);
      (a as { heap: PaddockHeap | null }).heap = heap;
    }
    const table = data.mode === 'paddock' ? PADDOCK_PROGRAMS : JS_PROGRAMS;
    const fn = table[m.program];
    if (!fn) throw new Error(`no ${data.mode} version of ${m.program}`);
    if (m.profile && data.url !== null) recording = await startProfile();
    await fn(a);
    if (recording !== null) cpu = await stopProfile(recording, data.url!, a.t0, a.t1);
  } catch (err) {
    error = err instanceof Error ? (err.stack ?? err.message) : String(err);
    Atomics.store(ctl, K_ABORT, 1);
    Atomics.store(ctl, K_GO, 1);
    Atomics.notify(ctl, K_GO);
  } finally {
    if (recording !== null && cpu === null) recording.session.disconnect();
    idleSignal.on = null;
    try {
      heap?.detach();
    } catch (err) {
      error ??= `detach: ${err instanceof Error ? err.message : String(err)}`;
    }
    const ins = Array.isArray(m.ports.in) ? m.ports.in : m.ports.in ? [m.ports.in] : [];
    for (const port of ins) port.close();
    m.ports.out?.close();
  }
  const r: ProgramReport = { id: m.id, t0: a.t0, t1: a.t1, ops: a.ops, bad: a.bad, extra: a.extra, error, cpu };
  parentPort!.postMessage(r);
}

