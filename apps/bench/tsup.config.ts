import { defineConfig } from 'tsup';
import { preset } from '../../tools/tsup.preset.mjs';

// An app, not a library: the Node entry, the workers' scripts (cross-32's and the programs'), the capacity child, the report
// writer and the wasm-calls measurement, each bundled flat into dist/ (the main thread finds the workers next
// to itself), no type declarations. @thi.ng/malloc and ringbuf.js stay external so
// those peers run exactly as published, from node_modules.
export default defineConfig(
  preset({
    entry: {
      main: 'src/main.ts',
      'cross-worker': 'src/workloads/cross-worker.ts',
      'program-worker': 'src/workloads/program-worker.ts',
      'floor-heap': 'src/peers/floor-heap.ts',
      'snapshot-worker': 'src/workloads/snapshot-worker.ts',
      'channel-worker': 'src/workloads/channel-worker.ts',
      'capacity-child': 'src/workloads/capacity-child.ts',
      'report-md': 'src/report-md.ts',
      'channels-doc': 'src/channels-doc.ts',
      'wasm-calls': 'src/wasm-calls.ts',
    },
    platform: 'node',
    dts: false,
    external: ['@thi.ng/malloc', 'ringbuf.js'],
  }),
);
