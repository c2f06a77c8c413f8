/** An ingest worker: the kernel (chunk, hash, compress) for the store worker's pool. */
import { serveBrowserIngest } from '@kura/store/ingest-worker';

serveBrowserIngest();
