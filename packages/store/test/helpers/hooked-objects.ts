/**
 * An object store wrapped for tests that need to place one server's calls in time: a hook
 * before each call (await it to stall the call, throw to fail it), listings that hide what a
 * server has not seen yet, and a hook on each failure. It outlives the Stores opened on it:
 * closing it closes nothing (the test owns the inner store).
 */
import type { ByteRange, ListOptions, ListPage, ObjectInfo, ObjectStore, UploadedPart } from '../../src/objects/object-store.js';

export type HookedOp = 'get' | 'head' | 'put' | 'create' | 'replace' | 'delete' | 'list' | 'startUpload' | 'uploadPart' | 'completeUpload' | 'abortUpload';

export class HookedObjectStore implements ObjectStore {
  /** Runs before every call: a promise stalls it, a throw fails it. */
  before: (op: HookedOp, key: string) => Promise<void> | void = () => undefined;
  /** Listings of prefixes it answers true for come back empty (a server that sees nothing new). */
  hide: (prefix: string) => boolean = () => false;
  /** Keys listings leave out (a storage whose listings lag behind its writes, one key at a time). */
  unlisted: (key: string) => boolean = () => false;
  /** Told every failure, before it reaches the caller. */
  failed: (op: HookedOp, key: string, e: unknown) => void = () => undefined;

  constructor(readonly inner: ObjectStore) {}

  get location(): string {
    return this.inner.location;
  }

  clockOffsetMs(): number | undefined {
    return this.inner.clockOffsetMs?.();
  }

  get(key: string, range?: ByteRange): Promise<Uint8Array> {
    return this.#run('get', key, () => this.inner.get(key, range));
  }

  head(key: string): Promise<ObjectInfo | undefined> {
    return this.#run('head', key, () => this.inner.head(key));
  }

  put(key: string, bytes: Uint8Array): Promise<string> {
    return this.#run('put', key, () => this.inner.put(key, bytes));
  }

  create(key: string, bytes: Uint8Array): Promise<boolean> {
    return this.#run('create', key, () => this.inner.create(key, bytes));
  }

  replace(key: string, bytes: Uint8Array, etag: string): Promise<string | undefined> {
    return this.#run('replace', key, () => this.inner.replace(key, bytes, etag));
  }

  delete(key: string): Promise<void> {
    return this.#run('delete', key, () => this.inner.delete(key));
  }

  list(prefix: string, options?: ListOptions): Promise<ListPage> {
    return this.#run('list', prefix, async () => {
      if (this.hide(prefix)) return { objects: [], more: false };
      const page = await this.inner.list(prefix, options);
      return { ...page, objects: page.objects.filter((o) => !this.unlisted(o.key)) };
    });
  }

  startUpload(key: string): Promise<string> {
    return this.#run('startUpload', key, () => this.inner.startUpload(key));
  }

  uploadPart(key: string, uploadId: string, partNumber: number, bytes: Uint8Array): Promise<string> {
    return this.#run('uploadPart', key, () => this.inner.uploadPart(key, uploadId, partNumber, bytes));
  }

  completeUpload(key: string, uploadId: string, parts: readonly UploadedPart[], options?: { ifAbsent?: boolean }): Promise<string | undefined> {
    return this.#run('completeUpload', key, () => this.inner.completeUpload(key, uploadId, parts, options));
  }

  abortUpload(key: string, uploadId: string): Promise<void> {
    return this.#run('abortUpload', key, () => this.inner.abortUpload(key, uploadId));
  }

  async close(): Promise<void> {}

  async #run<T>(op: HookedOp, key: string, fn: () => Promise<T>): Promise<T> {
    try {
      await this.before(op, key);
      return await fn();
    } catch (e) {
      this.failed(op, key, e);
      throw e;
    }
  }
}

/** A gate a hook can wait at: `reached` resolves when the first call arrives, `open()` lets every call through. */
export function gate(): { wait: () => Promise<void>; reached: Promise<void>; open: () => void } {
  let arrived!: () => void;
  let opened!: () => void;
  const reached = new Promise<void>((r) => (arrived = r));
  const passage = new Promise<void>((r) => (opened = r));
  return {
    wait: () => {
      arrived();
      return passage;
    },
    reached,
    open: () => opened(),
  };
}
