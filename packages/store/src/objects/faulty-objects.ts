/**
 * An object store that fails on purpose (kopia's blobtesting/faulty.go is the model): each
 * fault names an operation (and optionally keys) and fails it before the inner store runs it
 * (nothing happened) or after (it happened, and its answer was lost: what a reset connection or
 * a timeout does to a write that reached the server). For tests of everything above the
 * ObjectStore contract: nothing acknowledged may be lost, and a retried conditional write must
 * recognise its own success.
 */
import { StorageUnreachableError } from '../errors.js';
import type { ByteRange, ListOptions, ListPage, ObjectInfo, ObjectStore, UploadedPart } from './object-store.js';

export type ObjectOp = 'get' | 'head' | 'put' | 'create' | 'replace' | 'delete' | 'list' | 'startUpload' | 'uploadPart' | 'completeUpload' | 'abortUpload';

export interface Fault {
  op: ObjectOp | '*';
  /** Only keys (or list prefixes) it matches; all when not given. */
  key?: RegExp;
  /** Before: the call fails and nothing happens. After: it happens, then fails. */
  when: 'before' | 'after';
  /** How many calls it fails (then it is spent); 1 when not given. */
  times?: number;
  /** The error thrown; STORAGE_UNREACHABLE when not given. */
  error?: () => Error;
}

export class FaultyObjectStore implements ObjectStore {
  readonly #faults: (Fault & { left: number })[] = [];
  /** Faults that fired, in order (op, key, when). */
  readonly fired: { op: ObjectOp; key: string; when: 'before' | 'after' }[] = [];

  constructor(
    readonly inner: ObjectStore,
    faults: readonly Fault[] = [],
    /** Asked on every call the listed faults spare: a random workload's faults. */
    private readonly chance?: (op: ObjectOp, key: string) => 'before' | 'after' | undefined,
  ) {
    faults.forEach((f) => this.add(f));
  }

  get location(): string {
    return this.inner.location;
  }

  clockOffsetMs(): number | undefined {
    return this.inner.clockOffsetMs?.();
  }

  add(fault: Fault): void {
    this.#faults.push({ ...fault, left: fault.times ?? 1 });
  }

  /** Faults not yet spent. */
  get pending(): number {
    return this.#faults.filter((f) => f.left > 0).length;
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
    return this.#run('list', prefix, () => this.inner.list(prefix, options));
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

  close(): Promise<void> {
    return this.inner.close();
  }

  async #run<T>(op: ObjectOp, key: string, fn: () => Promise<T>): Promise<T> {
    const fault = this.#faults.find((f) => f.left > 0 && (f.op === '*' || f.op === op) && (!f.key || f.key.test(key)));
    let when: 'before' | 'after' | undefined;
    let error: Error | undefined;
    if (fault) {
      fault.left--;
      when = fault.when;
      error = fault.error?.();
    } else {
      when = this.chance?.(op, key);
    }
    if (when === undefined) return fn();
    this.fired.push({ op, key, when });
    const failure = error ?? new StorageUnreachableError(`injected fault: ${op} ${key} failed ${when === 'before' ? 'before it was sent' : 'after it happened (its answer was lost)'}`);
    if (when === 'after') await fn();
    throw failure;
  }
}
