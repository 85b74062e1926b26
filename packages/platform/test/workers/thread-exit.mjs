// Reports how onThreadExit saw this thread end, through a shared word: 1 normal, 2 crashed. `how` says how the
// thread ends: 'natural' (its event loop runs dry), 'exit' (process.exit), 'throw' (an uncaught exception), or
// 'handled' (an exception an 'uncaughtException' handler catches, then a natural end).
import { workerData } from 'node:worker_threads';
import { onThreadExit, threadKey } from '@paddock/platform';

const seen = new Int32Array(workerData.sab);
seen[1] = threadKey();
onThreadExit((end) => Atomics.store(seen, 0, end === 'crashed' ? 2 : 1));
if (workerData.how === 'exit') setTimeout(() => process.exit(0), 5);
if (workerData.how === 'throw') setTimeout(() => { throw new Error('nobody catches this'); }, 5);
if (workerData.how === 'wait') setInterval(() => {}, 1000);
if (workerData.how === 'handled') {
  process.on('uncaughtException', () => {});
  setTimeout(() => { throw new Error('a handler catches this'); }, 5);
}
