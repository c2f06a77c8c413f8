/**
 * Resumable uploads staged on disk, one file per upload (`<dir>/<id>.part`). The file is the
 * whole state: its length is the offset to resume from (after a server restart too), its
 * mtime the last activity. Appends to one upload are serialised (a second concurrent one is
 * UPLOAD_BUSY); uploads untouched for the TTL are deleted by a sweeper.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { open, readdir, rm, stat, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { HttpError } from '../errors.js';

const ID = /^[0-9a-f]{32}$/;

export class UploadSessions {
  readonly #busy = new Set<string>();
  readonly #sweeper: NodeJS.Timeout;

  constructor(
    readonly dir: string,
    readonly ttlMs: number,
  ) {
    mkdirSync(dir, { recursive: true });
    this.#sweeper = setInterval(() => void this.sweep().catch(() => undefined), Math.min(ttlMs / 4, 60_000));
    this.#sweeper.unref();
  }

  close(): void {
    clearInterval(this.#sweeper);
  }

  #file(id: string): string {
    return join(this.dir, `${id}.part`);
  }

  async create(): Promise<string> {
    const id = randomBytes(16).toString('hex');
    await (await open(this.#file(id), 'wx')).close();
    return id;
  }

  /** Bytes received so far, and when the upload expires; NOT_FOUND for unknown or expired ids. */
  async offset(id: string): Promise<{ offset: number; expiresAt: Date }> {
    const notFound = new HttpError('NOT_FOUND', 'no such upload (finished, cancelled or expired)');
    if (!ID.test(id)) throw notFound;
    const s = await stat(this.#file(id)).catch(() => undefined);
    if (!s || s.mtimeMs + this.ttlMs < Date.now()) throw notFound;
    return { offset: s.size, expiresAt: new Date(s.mtimeMs + this.ttlMs) };
  }

  /** Runs `work` with the upload to itself (appends and the finish never interleave). */
  async exclusive<T>(id: string, work: (file: string, offset: number) => Promise<T>): Promise<T> {
    const { offset } = await this.offset(id);
    if (this.#busy.has(id)) throw new HttpError('UPLOAD_BUSY', 'another request is writing to this upload; retry when it is done');
    this.#busy.add(id);
    try {
      return await work(this.#file(id), offset);
    } finally {
      this.#busy.delete(id);
    }
  }

  /**
   * Appends a body at `offset`. What arrived stays when the client goes away mid-body (that
   * is what resuming continues from); a body that breaks a rule (too large, shorter than its
   * Content-Range said) is rolled back to `offset`.
   */
  async append(file: string, offset: number, body: AsyncIterable<Uint8Array>, expectLength: number | undefined): Promise<number> {
    const fh = await open(file, 'a');
    let at = offset;
    try {
      for await (const piece of body) {
        await fh.write(piece);
        at += piece.length;
      }
    } catch (e) {
      if (e instanceof HttpError) {
        await fh.close();
        await truncate(file, offset);
        throw e;
      }
      throw e; // the client went away: keep what arrived
    } finally {
      await fh.close().catch(() => undefined);
    }
    if (expectLength !== undefined && at - offset !== expectLength) {
      await truncate(file, offset);
      throw new HttpError('INVALID_INPUT', `Content-Range announced ${expectLength} bytes; the body had ${at - offset}`, { field: 'content-range' });
    }
    return at;
  }

  async remove(id: string): Promise<void> {
    await rm(this.#file(id), { force: true });
  }

  /** Deletes uploads untouched for the TTL (never one a request is writing). */
  async sweep(now = Date.now()): Promise<number> {
    let removed = 0;
    for (const name of await readdir(this.dir)) {
      const id = name.replace(/\.part$/, '');
      if (!ID.test(id) || this.#busy.has(id)) continue;
      const s = await stat(join(this.dir, name)).catch(() => undefined);
      if (s && s.mtimeMs + this.ttlMs < now) {
        await rm(join(this.dir, name), { force: true });
        removed++;
      }
    }
    return removed;
  }
}

/**
 * `Content-Range` of a PATCH: `bytes <first>-<last>/<total|*>` (RFC 9110) or `<first>-<last>`
 * (OCI distribution). Returns the first byte and the body length it announces.
 */
export function parseContentRange(header: string | undefined): { start: number; length: number } | undefined {
  if (header === undefined) return undefined;
  const m = /^\s*(?:bytes\s+)?(\d+)-(\d+)(?:\/(?:\d+|\*))?\s*$/i.exec(header);
  if (!m) throw new HttpError('INVALID_INPUT', 'Content-Range must be "bytes <first>-<last>/<total|*>" or "<first>-<last>"', { field: 'content-range' });
  const start = Number(m[1]);
  const last = Number(m[2]);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(last) || last < start) {
    throw new HttpError('INVALID_INPUT', 'Content-Range: last byte before first', { field: 'content-range' });
  }
  return { start, length: last - start + 1 };
}
