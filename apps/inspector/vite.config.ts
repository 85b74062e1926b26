import { defineConfig } from 'vite';

// A SharedArrayBuffer needs cross-origin isolation: the dev server and the preview send the same headers as
// serveInspector does.
const isolation = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };

export default defineConfig({
  base: './',
  build: { outDir: 'dist/web', emptyOutDir: true, target: 'chrome120', chunkSizeWarningLimit: 2048 },
  worker: { format: 'es' },
  server: { headers: isolation, host: '127.0.0.1' },
  preview: { headers: isolation, host: '127.0.0.1' },
});
