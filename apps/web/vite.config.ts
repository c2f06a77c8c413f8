import { defineConfig } from 'vite';

export default defineConfig({
  // JSX through Preact's automatic runtime (also set in tsconfig.json).
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  // The store worker imports @kura/core, which loads its wasm with top-level await: module workers.
  worker: { format: 'es', rollupOptions: { output: { keepNames: true } } },
  build: {
    target: 'es2022',
    outDir: 'dist',
    emptyOutDir: true,
    chunkSizeWarningLimit: 2048,
    // bench.html: the page `pnpm bench browser` drives (same worker, timing hooks).
    // keepNames: errors reach the page with their class's name (CorruptDataError), not the
    // minifier's (`s`: a trial).
    rollupOptions: { input: { main: 'index.html', bench: 'bench.html' }, output: { keepNames: true } },
  },
  // sqlite-wasm and onnxruntime-web locate their .wasm relative to their own modules: they
  // must not be pre-bundled (onnxruntime-web/wasm is one self-contained ES module anyway).
  // The store worker's own dependencies are named here: the dev server does not crawl workers,
  // and one found while a worker runs makes Vite optimize again and reload, failing the
  // worker's imports in flight (a PDF then "fails" to extract).
  optimizeDeps: {
    exclude: ['@sqlite.org/sqlite-wasm', '@kura/core', 'onnxruntime-web'],
    include: ['pdfjs-dist', 'pdfjs-dist/build/pdf.worker.mjs', 'pdfjs-dist/legacy/build/pdf.mjs', 'mammoth', 'html-to-text', '@huggingface/tokenizers', 'zod', 'picomatch'].map((d) => `@kura/store > ${d}`),
  },
  server: { host: '127.0.0.1', port: 5173 },
});
