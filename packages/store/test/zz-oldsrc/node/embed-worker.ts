/**
 * The thread node/embed-away.ts runs the model on (semantic/remote-embedder.ts says why).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { answerEmbedRequests } from '../semantic/remote-embedder.js';
import { loadMiniLm } from './minilm-node.js';

const { dir, threads } = workerData as { dir: string; threads: number };
parentPort!.on(
  'message',
  answerEmbedRequests(loadMiniLm(dir, { threads }), (reply, transfer) => parentPort!.postMessage(reply, transfer)),
);
