/**
 * The messages between the page and the store worker. The page sends a Call; the worker
 * answers each with a Reply carrying the same id, and sends Progress and Added events while
 * long operations run. Errors cross as plain data (code, message): classes do not survive
 * structured cloning.
 */
export interface Call {
  id: number;
  method: string;
  args: unknown[];
}

export interface ErrorData {
  code: string;
  name: string;
  message: string;
  /** CORRUPT_DATA's: what is damaged (`database`, `log`, `config`, …: docs/ERRORS.md). */
  reason?: string;
}

export type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: ErrorData };

export interface Progress {
  type: 'progress';
  task: 'add' | 'snapshot' | 'push' | 'pull' | 'verify';
  /** Bytes (add, push, pull) or items (verify) done so far, of `total`. */
  done: number;
  total: number;
  /** Bytes per second since the task started. */
  rate: number;
  current?: string;
}

/** One file's outcome while `add` runs. */
export interface Added {
  type: 'added';
  path: string;
  size: number;
  digest?: string;
  chunks?: number;
  newChunks?: number;
  newBytes?: number;
  /**
   * The chunk map, at most MAP_CELLS cells in document order: each cell the share (0-255) of
   * its bytes that this put wrote; one cell per chunk when there are few enough.
   */
  cells?: Uint8Array;
  error?: ErrorData;
}

export type SearchMode = 'keyword' | 'semantic' | 'hybrid';

/** Search by meaning: the local model loading, in use, or not there (and why). */
export type Semantic = { state: 'loading' } | { state: 'ready'; model: string } | { state: 'unavailable'; reason: string };

/** Sent once the worker listens for calls. */
export interface Ready {
  type: 'ready';
}

export type WorkerEvent = Progress | Added | Ready;

export const MAP_CELLS = 512;
