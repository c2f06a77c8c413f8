/**
 * Resumable uploads staged on disk, one file per upload (`<dir>/<id>.part`). The file is the
 * whole state: its length is the offset to resume from (after a server restart too), its
 * mtime the last activity. Appends to one upload are serialised (a second concurrent one is
 * UPLOAD_BUSY); uploads untouched for the TTL are deleted by a sweeper.
 */
import { mkdirSync } from 'node:fs';
import { open, readdir, rm, stat, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { HttpError } from '../errors.js';
import { BusyUploads, UPLOAD_ID, sweepEvery, lengthMismatch, uploadNotFound, type StagedUpload, type UploadStaging } from './staging.js';

export class FileStaging implements UploadStaging {
  readonly #busy = new BusyUploads();
  readonly #sweeper: NodeJS.Timeout;

  constructor(
    readonly dir: string,
    readonly ttlMs: number,
  ) {
    mkdirSync(dir, { recursive: true });
    this.#sweeper = sweepEvery(ttlMs, () => this.sweep());
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
  }

  #file(id: string): string {
    return join(this.dir, `${id}.part`);
  }

  async create(id: string): Promise<void> {
    await (await open(this.#file(id), 'wx')).close();
  }

  async offset(id: string): Promise<{ offset: number; expiresAt: Date }> {
    if (!UPLOAD_ID.test(id)) throw uploadNotFound();
    const s = await stat(this.#file(id)).catch(() => undefined);
    if (!s || s.mtimeMs + this.ttlMs < Date.now()) throw uploadNotFound();
    return { offset: s.size, expiresAt: new Date(s.mtimeMs + this.ttlMs) };
  }

  async exclusive<T>(id: string, work: (upload: StagedUpload) => Promise<T>): Promise<T> {
    const { offset } = await this.offset(id);
    return this.#busy.hold(id, () => work(new FileUpload(this.#file(id), offset)));
  }

  async remove(id: string): Promise<void> {
    await rm(this.#file(id), { force: true });
  }

  async sweep(now = Date.now()): Promise<number> {
    let removed = 0;
    for (const name of await readdir(this.dir)) {
      const id = name.replace(/\.part$/, '');
      if (!UPLOAD_ID.test(id) || this.#busy.has(id)) continue;
      const s = await stat(join(this.dir, name)).catch(() => undefined);
      if (s && s.mtimeMs + this.ttlMs < now) {
        await rm(join(this.dir, name), { force: true });
        removed++;
      }
    }
    return removed;
  }
}

class FileUpload implements StagedUpload {
  constructor(
    readonly file: string,
    readonly offset: number,
  ) {}

  async append(body: AsyncIterable<Uint8Array>, expectLength: number | undefined): Promise<number> {
    const fh = await open(this.file, 'a');
    let at = (await fh.stat()).size;
    const from = at;
    try {
      for await (const piece of body) {
        await fh.write(piece);
        at += piece.length;
      }
    } catch (e) {
      if (e instanceof HttpError) {
        await fh.close();
        await truncate(this.file, from);
      }
      throw e; // (the client went away: what arrived stays)
    } finally {
      await fh.close().catch(() => undefined);
    }
    if (expectLength !== undefined && at - from !== expectLength) {
      await truncate(this.file, from);
      throw lengthMismatch(expectLength, at - from);
    }
    return at;
  }

  bytes(): string {
    return this.file;
  }

  async head(n: number): Promise<Uint8Array> {
    const fh = await open(this.file, 'r');
    try {
      const buf = new Uint8Array(n);
      const { bytesRead } = await fh.read(buf, 0, n, 0);
      return buf.subarray(0, bytesRead);
    } finally {
      await fh.close();
    }
  }

  async rollback(): Promise<void> {
    await truncate(this.file, this.offset);
  }
}
