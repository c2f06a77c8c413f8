/**
 * An object store whose listings lag (kopia's blobtesting/eventually_consistent.go is the
 * model): an object created or replaced less than `lagMs` ago may be missing from `list`, and
 * one deleted less than `lagMs` ago may still be listed, as S3 behaved before 2020 and as some
 * S3-compatible stores behind caches still do. Reads of a key are left consistent. For tests of
 * callers that must not take a listing as the whole truth: a commit that a listing misses is
 * still refused its name by the conditional create, and a refresh must find it later.
 */
import type { ByteRange, ListOptions, ListPage, ObjectInfo, ObjectStore, UploadedPart } from './object-store.js';

export class EventualObjectStore implements ObjectStore {
  /** Keys written recently: when (by `now`), hidden from listings until lagMs later. */
  readonly #written = new Map<string, number>();
  /** Keys deleted recently, with what a listing still shows of them. */
  readonly #deleted = new Map<string, { at: number; info: ObjectInfo }>();

  constructor(
    readonly inner: ObjectStore,
    readonly lagMs: number,
    private readonly now: () => number = () => Date.now(),
  ) {}

  get location(): string {
    return this.inner.location;
  }

  clockOffsetMs(): number | undefined {
    return this.inner.clockOffsetMs?.();
  }

  get(key: string, range?: ByteRange): Promise<Uint8Array> {
    return this.inner.get(key, range);
  }

  head(key: string): Promise<ObjectInfo | undefined> {
    return this.inner.head(key);
  }

  async put(key: string, bytes: Uint8Array): Promise<string> {
    const etag = await this.inner.put(key, bytes);
    this.#wrote(key);
    return etag;
  }

  async create(key: string, bytes: Uint8Array): Promise<boolean> {
    const held = await this.inner.head(key);
    const created = await this.inner.create(key, bytes);
    if (created && !held) this.#wrote(key);
    return created;
  }

  async replace(key: string, bytes: Uint8Array, etag: string): Promise<string | undefined> {
    const next = await this.inner.replace(key, bytes, etag);
    if (next !== undefined) this.#wrote(key);
    return next;
  }

  async delete(key: string): Promise<void> {
    const info = await this.inner.head(key);
    await this.inner.delete(key);
    if (info) this.#deleted.set(key, { at: this.now(), info });
    this.#written.delete(key);
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    const page = await this.inner.list(prefix, options);
    const now = this.now();
    for (const [k, at] of this.#written) if (now - at >= this.lagMs) this.#written.delete(k);
    for (const [k, d] of this.#deleted) if (now - d.at >= this.lagMs) this.#deleted.delete(k);
    const objects = page.objects.filter((o) => !this.#written.has(o.key));
    const last = page.more ? page.objects[page.objects.length - 1]?.key : undefined;
    for (const [key, d] of this.#deleted) {
      if (!key.startsWith(prefix) || (options.startAfter !== undefined && key <= options.startAfter) || (last !== undefined && key > last)) continue;
      if (!objects.some((o) => o.key === key)) objects.push(d.info);
    }
    objects.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    return { objects, more: page.more };
  }

  async startUpload(key: string): Promise<string> {
    return this.inner.startUpload(key);
  }

  uploadPart(key: string, uploadId: string, partNumber: number, bytes: Uint8Array): Promise<string> {
    return this.inner.uploadPart(key, uploadId, partNumber, bytes);
  }

  async completeUpload(key: string, uploadId: string, parts: readonly UploadedPart[], options?: { ifAbsent?: boolean }): Promise<string | undefined> {
    const etag = await this.inner.completeUpload(key, uploadId, parts, options);
    if (etag !== undefined) this.#wrote(key);
    return etag;
  }

  abortUpload(key: string, uploadId: string): Promise<void> {
    return this.inner.abortUpload(key, uploadId);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  #wrote(key: string): void {
    this.#written.set(key, this.now());
    this.#deleted.delete(key);
  }
}
