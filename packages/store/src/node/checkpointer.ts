/**
 * WAL checkpoints off the main thread. SQLite checkpoints automatically inside the commit that
 * crosses wal_autocheckpoint pages, and a checkpoint fsyncs the WAL and the database: that
 * commit pays milliseconds. The writer turns auto-checkpoints off and a worker thread runs a
 * PASSIVE checkpoint every `intervalMs` instead (measured: 1 KB puts ~+45% here). Durability
 * is unchanged: commits are as durable as before; only where the WAL's frames are copied
 * into the database file, and on which thread, changes.
 */
import { existsSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { storageError } from '../errors.js';

function workerUrl(): URL {
  const beside = new URL('./checkpoint-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(beside))) return beside;
  return new URL('../../dist/node/checkpoint-worker.js', import.meta.url); // from the TS sources (tests)
}

export interface Checkpointer {
  /** Resolves once the worker checkpoints; rejects (typed) if it could not start. */
  readonly ready: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts the worker and returns at once: a store opens without waiting ~50-80 ms for a thread
 * to boot (a store's whole open was ~70 ms, ~60 of them this wait). `onReady` is told when the
 * worker checkpoints (the writer then turns SQLite's own checkpoints off); `onUnavailable`
 * once, should it fail to start or end unasked (the writer turns them back on: slower commits,
 * a bounded WAL, nothing less durable). `walLimit` (bytes past which a TRUNCATE runs;
 * checkpoint-worker.ts WAL_LIMIT by default) and `intervalMs` are there for tests, which make
 * the TRUNCATE race every commit.
 */
export function startCheckpointer(
  path: string,
  {
    intervalMs = 200,
    walLimit,
    onReady,
    onUnavailable,
  }: { intervalMs?: number; walLimit?: number; onReady?: () => void; onUnavailable?: (error: Error) => void } = {},
): Checkpointer {
  const worker = new Worker(workerUrl(), { workerData: { path, intervalMs, walLimit } });
  worker.unref(); // a store left open must not keep the process alive
  let state: 'starting' | 'running' | 'stopping' | 'down' = 'starting';
  const ready = new Promise<void>((resolve, reject) => {
    const down = (error: Error) => {
      reject(error); // (no effect once it resolved)
      if (state === 'stopping' || state === 'down') return; // asked to end: not an outage
      state = 'down';
      onUnavailable?.(error);
    };
    worker.once('message', (m: 'ready' | { failed: { code?: string; message: string } }) => {
      if (m === 'ready') {
        if (state === 'starting') {
          state = 'running';
          onReady?.();
        }
        return resolve();
      }
      // The worker could not open the database (a disk error): the same typed error as the writer's.
      down(storageError(Object.assign(new Error(m.failed.message), { code: m.failed.code })) as Error);
    });
    worker.once('error', (e: unknown) => down(e instanceof Error ? e : new Error(String(e))));
    worker.once('exit', (code) => down(new Error(`the checkpoint worker ended (exit code ${code})`)));
  });
  ready.catch(() => undefined); // told through onUnavailable; `ready` is for whoever asks
  return {
    ready,
    async stop() {
      if (state === 'stopping') return;
      const wasRunning = state === 'running';
      state = 'stopping';
      if (wasRunning) {
        // A last PASSIVE checkpoint, then the worker closes its connection.
        const stopped = new Promise<void>((resolve) => {
          worker.once('message', () => resolve());
          worker.once('exit', () => resolve());
        });
        worker.postMessage('stop');
        await stopped;
      }
      // Still starting (a short command): nothing to checkpoint for; the writer's connection,
      // closing last, checkpoints the WAL itself.
      await worker.terminate();
    },
  };
}

/**
 * While the worker checkpoints, SQLite's own checkpoint inside a commit stays on as a backstop,
 * past the worker's TRUNCATE limit (checkpoint-worker.ts WAL_LIMIT, 256 MiB): when the worker
 * thread lags (a busy machine: the WAL reached 450+ MiB in a test of 40,000 puts), the commit
 * that passes ~312 MiB (80,000 pages of 4 KiB) checkpoints itself and the WAL is reused from
 * its start, so it stays bounded whatever the worker's share of the CPU.
 */
const WAL_BACKSTOP_PAGES = 80_000;

/**
 * A writable database's checkpoint worker starts once it has been open this long, or once its
 * WAL has grown by AFTER_WAL bytes since the store opened, whichever comes first. A `kura` command that writes is
 * over in ~0.3 s and writes a few pages: booting the worker for it cost ~25-40 ms of CPU on the
 * other core, and closing waited for the boot. A store taking a burst of writes gets the worker
 * well before SQLite's own first checkpoint inside a commit (at 1000 pages, ~4 MB), which is
 * what the worker saves it: with a 1 MiB threshold, 100 KB puts in the first 0.3 s of a new
 * store were ~15% slower than with the worker started at open; with 256 KiB, alternated runs
 * were even.
 */
const AFTER_MS = 250;
const AFTER_WAL = 256 << 10;

/**
 * The checkpoint worker of one writable database, started late (AFTER_MS, AFTER_WAL). Both the
 * local store's database and an object store's cache of its replay use it: the cache's commits
 * paid SQLite's checkpoints inside them too (1 KB puts to S3 at 32 in flight: the commit's
 * transaction ~39 µs of the main thread's time per put without the worker, ~25 with it).
 */
export class LazyCheckpointer {
  #checkpointer: Checkpointer | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #startNow: (() => void) | undefined;
  /** The WAL's size when the store opened; undefined while it opens (its writes are no burst). */
  #openedAt: number | undefined;
  readonly #wal: string;

  constructor(private readonly path: string) {
    this.#wal = `${path}-wal`;
  }

  /** For the database's `onCommit`: one stat per commit (~3 µs; commits are grouped) until the worker starts. */
  readonly onCommit = (): void => {
    if (this.#startNow && this.#openedAt !== undefined && walSize(this.#wal) - this.#openedAt > AFTER_WAL) this.#startNow();
  };

  /**
   * The store is open: the WAL grown from here on is its writes. What opening wrote — a new
   * store's schema (~260 KiB of pages), a migration, a catch-up — is not a burst of the store's
   * writes; one that takes long is met by the timer (AFTER_MS). A store made just now starts
   * the worker at its first commit: it is being filled (100 KB puts into a new store waiting for
   * 256 KiB of WAL first: 1,607 against 1,805 puts/s, five runs alternated with the build that
   * counted the schema's WAL; starting at the first commit: 1,530-1,696 against 1,460-2,091,
   * three each, noise), while a bare `kura init` commits nothing after it opens and starts none.
   */
  opened(how: { created: boolean }): void {
    this.#openedAt = how.created ? -Infinity : walSize(this.#wal);
  }

  /**
   * Arms the start. Until the worker checkpoints, SQLite checkpoints inside a commit only past
   * the backstop, as after (and at its default 1000 pages again should the worker fail): the WAL
   * may be another writer's too, whose worker checkpoints it. At 1000 pages, a writer that
   * opened a store others were writing met their WAL past that at once, and each of its
   * commits checkpointed it — fsyncs included, up to 1.5 s a commit, while the others went on
   * (store-writer-turns.test.ts: one writer of three made 1 commit in 1.5 s, 1 run in 8). A
   * writer alone that closes before its worker starts leaves no WAL: the last connection to
   * close checkpoints it.
   */
  arm(db: { exec(sql: string): void }): void {
    const autoCheckpoints = (pages: number) => () => {
      try {
        db.exec(`PRAGMA wal_autocheckpoint = ${pages}`);
      } catch {
        // The store closed meanwhile: nothing left to checkpoint for.
      }
    };
    autoCheckpoints(WAL_BACKSTOP_PAGES)();
    this.#startNow = () => {
      clearTimeout(this.#timer);
      this.#startNow = undefined;
      this.#checkpointer = startCheckpointer(this.path, { onReady: autoCheckpoints(WAL_BACKSTOP_PAGES), onUnavailable: autoCheckpoints(1000) });
    };
    this.#timer = setTimeout(() => this.#startNow?.(), AFTER_MS);
    this.#timer.unref(); // a store left open must not keep the process alive
  }

  async stop(): Promise<void> {
    clearTimeout(this.#timer);
    this.#startNow = undefined;
    await this.#checkpointer?.stop();
  }
}

function walSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0; // none yet
  }
}
