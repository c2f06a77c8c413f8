/** The embedding worker's module: the store's code runs the model (browser/embed-worker.ts). */
import { serveEmbedding } from '@kura/store/embed-worker';

serveEmbedding();
