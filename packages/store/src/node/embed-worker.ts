/**
 * The thread node/embed-away.ts runs the model on: onnxruntime-node's `run` holds the thread
 * that calls it (~27 ms per 200-token text here), which on the store's thread would stall every
 * put and request while background embedding runs.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { loadMiniLm } from './minilm-node.js';

const { dir, threads } = workerData as { dir: string; threads: number };
const model = loadMiniLm(dir, { threads });
model.catch(() => undefined); // reported with the first request

parentPort!.on('message', (m: { id: number; texts: string[] }) => {
  model
    .then((e) => e.embed(m.texts))
    .then(
      (vectors) => parentPort!.postMessage({ id: m.id, vectors }, vectors.map((v) => v.buffer as ArrayBuffer)),
      (e: unknown) => {
        const err = e as { code?: unknown; message?: unknown };
        parentPort!.postMessage({ id: m.id, failed: { code: typeof err?.code === 'string' ? err.code : undefined, message: String(err?.message ?? e) } });
      },
    );
});
