/** The embedding worker for the checks in worker.ts: the store's own body (browser/embed-worker.ts). */
import { serveEmbedding } from '../../../../packages/store/src/browser/embed-worker.js';

serveEmbedding();
