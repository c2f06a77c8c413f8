/**
 * An object store that hands every call to another one through `run(op, key, call)`: what the
 * wrappers for tests (faulty-objects.ts, and the tests' hooked one) change is that one method.
 */
import type { ByteRange, ListOptions, ListPage, ObjectInfo, ObjectStore, UploadedPart } from './object-store.js';

export type ObjectOp = 'get' | 'head' | 'put' | 'create' | 'replace' | 'delete' | 'list' | 'startUpload' | 'uploadPart' | 'completeUpload' | 'abortUpload';

export abstract class ForwardingObjectStore implements ObjectStore {
  constructor(readonly inner: ObjectStore) {}

  /** Runs one call (`key`: its key, or a listing's prefix); `call` does it on the inner store. */
  protected abstract run<T>(op: ObjectOp, key: string, call: () => Promise<T>): Promise<T>;

  get location(): string {
    return this.inner.location;
  }

  clockOffsetMs(): number | undefined {
    return this.inner.clockOffsetMs?.();
  }

  get(key: string, range?: ByteRange): Promise<Uint8Array> {
    return this.run('get', key, () => this.inner.get(key, range));
  }

  head(key: string): Promise<ObjectInfo | undefined> {
    return this.run('head', key, () => this.inner.head(key));
  }

  put(key: string, bytes: Uint8Array): Promise<string> {
    return this.run('put', key, () => this.inner.put(key, bytes));
  }

  create(key: string, bytes: Uint8Array): Promise<boolean> {
    return this.run('create', key, () => this.inner.create(key, bytes));
  }

  replace(key: string, bytes: Uint8Array, etag: string): Promise<string | undefined> {
    return this.run('replace', key, () => this.inner.replace(key, bytes, etag));
  }

  delete(key: string): Promise<void> {
    return this.run('delete', key, () => this.inner.delete(key));
  }

  list(prefix: string, options?: ListOptions): Promise<ListPage> {
    return this.run('list', prefix, () => this.inner.list(prefix, options));
  }

  startUpload(key: string): Promise<string> {
    return this.run('startUpload', key, () => this.inner.startUpload(key));
  }

  uploadPart(key: string, uploadId: string, partNumber: number, bytes: Uint8Array): Promise<string> {
    return this.run('uploadPart', key, () => this.inner.uploadPart(key, uploadId, partNumber, bytes));
  }

  completeUpload(key: string, uploadId: string, parts: readonly UploadedPart[], options?: { ifAbsent?: boolean }): Promise<string | undefined> {
    return this.run('completeUpload', key, () => this.inner.completeUpload(key, uploadId, parts, options));
  }

  abortUpload(key: string, uploadId: string): Promise<void> {
    return this.run('abortUpload', key, () => this.inner.abortUpload(key, uploadId));
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
