/**
 * Resumable uploads staged in the store's bucket (decision 0042), so each request of an upload
 * may reach any server: `uploads/<id>/session` (empty, made when the upload starts) and the
 * bytes as pieces `uploads/<id>/p<offset, 20 digits>` of at most PIECE_BYTES, each created only
 * if absent. The offset is where the contiguous pieces end; two servers appending at one offset
 * cannot both succeed (the loser answers UPLOAD_BUSY). An upload expires TTL after its newest
 * object (by the object store's clock, which GC keeps within a minute of ours).
 */
import { listAll, type ObjectInfo, type ObjectStore } from '@kura/store';
import { HttpError } from '../errors.js';
import { BusyUploads, UPLOAD_ID, sweepEvery, lengthMismatch, uploadBusy, uploadNotFound, type StagedUpload, type UploadStaging } from './staging.js';

/** Bytes a request buffers before they go up as a piece (memory per request in flight). */
export const PIECE_BYTES = 8 * 1024 * 1024;

const PREFIX = 'uploads/';
const sessionKey = (id: string) => `${PREFIX}${id}/session`;
const pieceKey = (id: string, offset: number) => `${PREFIX}${id}/p${String(offset).padStart(20, '0')}`;

interface Piece {
  key: string;
  offset: number;
  size: number;
}

interface UploadState {
  offset: number;
  pieces: Piece[];
  newest: number;
}

export class ObjectStaging implements UploadStaging {
  readonly #busy = new BusyUploads();
  readonly #sweeper: NodeJS.Timeout;

  constructor(
    readonly objects: ObjectStore,
    readonly ttlMs: number,
  ) {
    this.#sweeper = sweepEvery(ttlMs, () => this.sweep());
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    await this.objects.close();
  }

  async create(id: string): Promise<void> {
    await this.objects.create(sessionKey(id), new Uint8Array(0));
  }

  /** The upload's pieces in order, as far as they are contiguous; NOT_FOUND when it is unknown or expired. */
  async #state(id: string): Promise<UploadState> {
    if (!UPLOAD_ID.test(id)) throw uploadNotFound();
    const listed: ObjectInfo[] = [];
    for await (const o of listAll(this.objects, `${PREFIX}${id}/`)) listed.push(o);
    if (!listed.some((o) => o.key === sessionKey(id))) throw uploadNotFound();
    const newest = Math.max(...listed.map((o) => o.modified));
    if (newest + this.ttlMs < Date.now()) throw uploadNotFound();
    const pieces: Piece[] = [];
    let offset = 0;
    // Keys sort by offset (20 digits); a gap (never made by this code) ends what counts.
    for (const o of listed) {
      const m = /\/p(\d{20})$/.exec(o.key);
      if (!m) continue;
      if (Number(m[1]) !== offset) break;
      pieces.push({ key: o.key, offset, size: o.size });
      offset += o.size;
    }
    return { offset, pieces, newest };
  }

  async offset(id: string): Promise<{ offset: number; expiresAt: Date }> {
    const { offset, newest } = await this.#state(id);
    return { offset, expiresAt: new Date(newest + this.ttlMs) };
  }

  async exclusive<T>(id: string, work: (upload: StagedUpload) => Promise<T>): Promise<T> {
    return this.#busy.hold(id, async () => {
      const state = await this.#state(id);
      return work(new ObjectUpload(this.objects, id, state));
    });
  }

  async remove(id: string): Promise<void> {
    const keys: string[] = [];
    for await (const o of listAll(this.objects, `${PREFIX}${id}/`)) keys.push(o.key);
    // The session marker last: an upload half removed is still known, and removed again.
    keys.sort((a, b) => Number(a.endsWith('/session')) - Number(b.endsWith('/session')));
    for (const k of keys) await this.objects.delete(k);
  }

  async sweep(now = Date.now()): Promise<number> {
    const newest = new Map<string, number>();
    for await (const o of listAll(this.objects, PREFIX)) {
      const id = o.key.slice(PREFIX.length).split('/')[0]!;
      newest.set(id, Math.max(newest.get(id) ?? 0, o.modified));
    }
    let removed = 0;
    for (const [id, at] of newest) {
      if (!UPLOAD_ID.test(id) || this.#busy.has(id) || at + this.ttlMs >= now) continue;
      await this.remove(id);
      removed++;
    }
    return removed;
  }
}

class ObjectUpload implements StagedUpload {
  readonly offset: number;
  readonly #pieces: Piece[];
  /** Pieces this request made (what a rollback deletes). */
  readonly #mine: Piece[] = [];
  #end: number;

  constructor(
    private readonly objects: ObjectStore,
    private readonly id: string,
    state: UploadState,
  ) {
    this.offset = state.offset;
    this.#end = state.offset;
    this.#pieces = [...state.pieces];
  }

  async append(body: AsyncIterable<Uint8Array>, expectLength: number | undefined): Promise<number> {
    const from = this.#end;
    let buffered: Uint8Array[] = [];
    let size = 0;
    let lost: HttpError | undefined;
    const flush = async () => {
      if (size === 0) return;
      const bytes = Buffer.concat(buffered, size);
      buffered = [];
      size = 0;
      const piece = { key: pieceKey(this.id, this.#end), offset: this.#end, size: bytes.length };
      // Created only if absent: another server appending at this offset meanwhile won (what
      // this request staged before stays: the winner's piece follows it).
      if (!(await this.objects.create(piece.key, bytes))) throw (lost = uploadBusy());
      this.#pieces.push(piece);
      this.#mine.push(piece);
      this.#end += bytes.length;
    };
    try {
      for await (const chunk of body) {
        buffered.push(chunk);
        size += chunk.length;
        if (size >= PIECE_BYTES) await flush();
      }
    } catch (e) {
      if (e === lost) throw e;
      if (e instanceof HttpError) {
        await this.rollback();
        throw e;
      }
      await flush().catch(() => undefined); // the client went away: what arrived stays
      throw e;
    }
    await flush();
    if (expectLength !== undefined && this.#end - from !== expectLength) {
      const got = this.#end - from;
      await this.rollback();
      throw lengthMismatch(expectLength, got);
    }
    return this.#end;
  }

  bytes(): AsyncIterable<Uint8Array> {
    const pieces = [...this.#pieces];
    const objects = this.objects;
    return (async function* () {
      for (const p of pieces) yield await objects.get(p.key);
    })();
  }

  async head(n: number): Promise<Uint8Array> {
    const first = this.#pieces[0];
    if (!first || first.size === 0) return new Uint8Array(0);
    return this.objects.get(first.key, { offset: 0, length: Math.min(n, first.size) });
  }

  async rollback(): Promise<void> {
    for (const p of this.#mine.splice(0).reverse()) await this.objects.delete(p.key);
    while (this.#pieces.length && this.#pieces.at(-1)!.offset >= this.offset) this.#pieces.pop();
    this.#end = this.offset;
  }
}
