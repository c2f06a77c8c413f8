/**
 * Objects in memory (the ObjectStore contract, objects/object-store.ts): the reference the
 * conformance suite is written against, and the fake under protocol tests. Its clock is the
 * caller's (`now`), so tests of GC margins run on simulated time.
 */
import { NotFoundError } from '../errors.js';
import {
  checkKey,
  checkLimit,
  checkPart,
  checkPrefix,
  checkRange,
  sameBytes,
  MIN_PART_SIZE,
  type ByteRange,
  type ListOptions,
  type ListPage,
  type ObjectInfo,
  type ObjectStore,
  type UploadedPart,
} from './object-store.js';
import { InvalidInputError } from '../errors.js';

interface Stored {
  bytes: Uint8Array;
  etag: string;
  modified: number;
}

export class MemoryObjectStore implements ObjectStore {
  readonly location = 'memory:';
  readonly #objects = new Map<string, Stored>();
  readonly #uploads = new Map<string, { key: string; parts: Map<number, { bytes: Uint8Array; etag: string }> }>();
  #written = 0;
  #uploadsStarted = 0;

  /** `now`: the storage's clock (late-bound by default: a test's fake Date is followed). */
  constructor(private readonly now: () => number = () => Date.now()) {}

  clockOffsetMs(): number {
    return this.now() - Date.now();
  }

  async get(key: string, range?: ByteRange): Promise<Uint8Array> {
    checkKey(key);
    checkRange(range);
    const o = this.#objects.get(key);
    if (!o) throw new NotFoundError(`no object ${key}`);
    return range ? o.bytes.slice(range.offset, range.offset + range.length) : o.bytes.slice();
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    checkKey(key);
    const o = this.#objects.get(key);
    return o && { key, size: o.bytes.length, etag: o.etag, modified: o.modified };
  }

  async put(key: string, bytes: Uint8Array): Promise<string> {
    checkKey(key);
    return this.#write(key, bytes);
  }

  async create(key: string, bytes: Uint8Array): Promise<boolean> {
    checkKey(key);
    const o = this.#objects.get(key);
    if (o) return sameBytes(o.bytes, bytes);
    this.#write(key, bytes);
    return true;
  }

  async replace(key: string, bytes: Uint8Array, etag: string): Promise<string | undefined> {
    checkKey(key);
    if (this.#objects.get(key)?.etag !== etag) return undefined;
    return this.#write(key, bytes);
  }

  async delete(key: string): Promise<void> {
    checkKey(key);
    this.#objects.delete(key);
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    checkPrefix(prefix);
    const limit = checkLimit(options.limit);
    const keys = [...this.#objects.keys()].filter((k) => k.startsWith(prefix) && (options.startAfter === undefined || k > options.startAfter)).sort();
    return {
      objects: keys.slice(0, limit).map((key) => {
        const o = this.#objects.get(key)!;
        return { key, size: o.bytes.length, etag: o.etag, modified: o.modified };
      }),
      more: keys.length > limit,
    };
  }

  async startUpload(key: string): Promise<string> {
    checkKey(key);
    const id = `upload-${++this.#uploadsStarted}`;
    this.#uploads.set(id, { key, parts: new Map() });
    return id;
  }

  async uploadPart(key: string, uploadId: string, partNumber: number, bytes: Uint8Array): Promise<string> {
    checkKey(key);
    checkPart(partNumber);
    const upload = this.#upload(key, uploadId);
    const etag = `"part-${++this.#written}"`;
    upload.parts.set(partNumber, { bytes: bytes.slice(), etag });
    return etag;
  }

  async completeUpload(key: string, uploadId: string, parts: readonly UploadedPart[], options: { ifAbsent?: boolean } = {}): Promise<string | undefined> {
    checkKey(key);
    const upload = this.#upload(key, uploadId);
    const bytes = concatParts(parts, (n) => upload.parts.get(n));
    if (options.ifAbsent) {
      const o = this.#objects.get(key);
      if (o) {
        this.#uploads.delete(uploadId);
        return sameBytes(o.bytes, bytes) ? o.etag : undefined;
      }
    }
    this.#uploads.delete(uploadId);
    return this.#write(key, bytes);
  }

  async abortUpload(key: string, uploadId: string): Promise<void> {
    checkKey(key);
    this.#uploads.delete(uploadId);
  }

  async close(): Promise<void> {}

  #upload(key: string, uploadId: string) {
    const upload = this.#uploads.get(uploadId);
    if (!upload || upload.key !== key) throw new NotFoundError(`no upload ${uploadId} of ${key}`);
    return upload;
  }

  #write(key: string, bytes: Uint8Array): string {
    const etag = `"${++this.#written}"`;
    this.#objects.set(key, { bytes: bytes.slice(), etag, modified: this.now() });
    return etag;
  }
}

/**
 * The object a multipart upload's parts make, by S3's rules: parts named in ascending order,
 * each as uploaded (its etag), every one but the last at least MIN_PART_SIZE.
 */
export function concatParts(parts: readonly UploadedPart[], uploaded: (partNumber: number) => { bytes: Uint8Array; etag: string } | undefined): Uint8Array {
  if (parts.length === 0) throw new InvalidInputError('a multipart upload needs at least one part', 'parts');
  const pieces = parts.map((p, i) => {
    checkPart(p.partNumber);
    if (i > 0 && p.partNumber <= parts[i - 1]!.partNumber) throw new InvalidInputError('parts are listed in ascending order of their numbers', 'parts');
    const part = uploaded(p.partNumber);
    if (!part || part.etag !== p.etag) throw new InvalidInputError(`part ${p.partNumber} was not uploaded with etag ${p.etag}`, 'parts');
    if (i < parts.length - 1 && part.bytes.length < MIN_PART_SIZE) throw new InvalidInputError(`part ${p.partNumber} is ${part.bytes.length} bytes; every part but the last is at least ${MIN_PART_SIZE}`, 'parts');
    return part.bytes;
  });
  const out = new Uint8Array(pieces.reduce((n, b) => n + b.length, 0));
  let at = 0;
  for (const b of pieces) {
    out.set(b, at);
    at += b.length;
  }
  return out;
}
