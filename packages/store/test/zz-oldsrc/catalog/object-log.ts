/**
 * The catalog's objects in an object store (decision 0040): `kura-store.json`, `log/<20
 * digits>` (one commit each, created only if absent) and `checkpoints/<20 digits>`, named as in
 * a store directory (FORMAT.md §5). Segments are never appended to: a writer publishes each
 * commit as a segment of its own (catalog/object-commits.ts).
 */
import { InternalError } from '@kura/core';
import type { LogStore, SegmentAppender } from './log-store.js';
import type { WaitingMarks } from './turn-taking.js';
import { isNotFound, listAll, type ObjectStore } from '../objects/object-store.js';
import { FRAME_OVERHEAD, frameMagicAt } from './frame.js';
import type { Sealing } from '../encryption/sealing.js';
import { openConfig, sealConfig } from '../encryption/config.js';

/** The length of the frame whose head `bytes` begin with (FORMAT.md §15.2), or undefined when they do not begin with one. */
function frameLength(bytes: Uint8Array): number | undefined {
  if (bytes.length < 8 || frameMagicAt(bytes) === undefined) return undefined;
  return FRAME_OVERHEAD + new DataView(bytes.buffer, bytes.byteOffset, 8).getUint32(4, true);
}

export const CONFIG_KEY = 'kura-store.json';
/**
 * Bytes a read of a commit object asks for first: the frame of a commit of ~200 small puts,
 * whole (larger ones take a second read), and little of a pack after it (decision 0044).
 */
export const FIRST_READ = 64 * 1024;
/** How many log objects a reader fetches at once. */
export const READ_AHEAD = 16;
export const LOG = 'log/';
const CHECKPOINTS = 'checkpoints/';
const NAME = /^[0-9]{20}$/;
/** Writers waiting for a seq (catalog/turn-taking.ts), `waiting/<writer id>`, empty. */
export const WAITING = 'waiting/';
/** A mark this old is left behind by a writer that stopped: whoever lists it deletes it. */
const STALE_MARK_MS = 10 * 60_000;

export class ObjectLogStore implements LogStore, WaitingMarks {
  /**
   * The configuration object once read whole: it is only ever created (createConfig, a
   * conditional create), never replaced, so an open reads it once (it was read twice: the
   * cache directory's check, then the catalog's).
   */
  #config: Uint8Array | undefined;

  /** Log objects a reader fetches at once (LogStore.readAhead; SCALEOUT.md: one at a time falls behind). */
  readonly readAhead = READ_AHEAD;
  /** LogStore.checkpointAway (set by node/object-backends.ts for a writer). */
  checkpointAway?: (schema: number) => Promise<number>;
  /**
   * An encrypted store's sealed forms (FORMAT.md §17), set once its key is unlocked, before the
   * catalog reads anything: the configuration's settings and checkpoints are sealed here,
   * commit bodies by the frame codec.
   */
  sealing?: Sealing;

  constructor(readonly objects: ObjectStore) {}

  /** The configuration's settings (an encrypted store's opened: FORMAT.md §17.3). */
  async readConfig(): Promise<Uint8Array | undefined> {
    const raw = await this.readRawConfig();
    return raw && raw.length && this.sealing ? openConfig(raw, this.sealing) : raw;
  }

  /** The configuration object as stored (an encrypted store's: its public header and sealed settings). */
  async readRawConfig(): Promise<Uint8Array | undefined> {
    if (this.#config) return this.#config;
    try {
      const bytes = await this.objects.get(CONFIG_KEY);
      if (bytes.length > 0) this.#config = bytes;
      return bytes;
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  createConfig(bytes: Uint8Array): Promise<boolean> {
    return this.objects.create(CONFIG_KEY, this.sealing ? sealConfig(bytes, this.sealing) : bytes);
  }

  segments(): Promise<string[]> {
    return this.#names(LOG);
  }

  /** Segment names after `name` (one LIST when nothing is new). */
  segmentsAfter(name: string): Promise<string[]> {
    return this.#names(LOG, name ? `${LOG}${name}` : undefined);
  }

  /**
   * The commit in `log/<name>`, without the pack it may carry (decision 0044): the first
   * FIRST_READ bytes, and the rest of the frame when its header says it is longer. Bytes that
   * are not a frame's head are answered as they are (the caller finds no commit in them).
   */
  async readSegment(name: string): Promise<Uint8Array> {
    const key = `${LOG}${name}`;
    const first = await this.objects.get(key, { offset: 0, length: FIRST_READ });
    const length = frameLength(first);
    if (length === undefined || length <= FIRST_READ) return length === undefined ? first : first.subarray(0, Math.min(length, first.length));
    if (first.length < FIRST_READ) return first; // shorter than its frame: torn
    const rest = await this.objects.get(key, { offset: FIRST_READ, length: length - FIRST_READ });
    const bytes = new Uint8Array(FIRST_READ + rest.length);
    bytes.set(first);
    bytes.set(rest, FIRST_READ);
    return bytes;
  }

  createSegment(name: string, bytes: Uint8Array): Promise<boolean> {
    return this.objects.create(`${LOG}${name}`, bytes);
  }

  async openAppend(name: string): Promise<SegmentAppender> {
    throw new InternalError(`log segment ${name}: segments in an object store are never appended to (decision 0040)`);
  }

  checkpoints(): Promise<string[]> {
    return this.#names(CHECKPOINTS);
  }

  /** Checkpoint names with when each was written, by the storage's clock (log truncation, decision 0045). */
  async checkpointsListed(): Promise<{ name: string; modified: number }[]> {
    const out: { name: string; modified: number }[] = [];
    for await (const o of listAll(this.objects, CHECKPOINTS)) {
      const name = o.key.slice(CHECKPOINTS.length);
      if (NAME.test(name)) out.push({ name, modified: o.modified });
    }
    return out;
  }

  /** The log's object names up to seq `last`, oldest first (a listing that stops there). */
  async segmentsThrough(last: number): Promise<string[]> {
    const names: string[] = [];
    for await (const o of listAll(this.objects, LOG)) {
      const name = o.key.slice(LOG.length);
      if (!NAME.test(name)) continue;
      if (Number(name) > last) break;
      names.push(name);
    }
    return names;
  }

  deleteSegment(name: string): Promise<void> {
    return this.objects.delete(`${LOG}${name}`);
  }

  deleteCheckpoint(name: string): Promise<void> {
    return this.objects.delete(`${CHECKPOINTS}${name}`);
  }

  async readCheckpoint(name: string): Promise<Uint8Array> {
    const bytes = await this.objects.get(`${CHECKPOINTS}${name}`);
    return this.sealing ? this.sealing.openCheckpoint(Number(name), bytes) : bytes;
  }

  createCheckpoint(name: string, bytes: Uint8Array): Promise<boolean> {
    return this.objects.create(`${CHECKPOINTS}${name}`, this.sealing ? this.sealing.sealCheckpoint(Number(name), bytes) : bytes);
  }

  async markWaiting(writer: string): Promise<void> {
    await this.objects.put(`${WAITING}${writer}`, new Uint8Array(0));
  }

  clearWaiting(writer: string): Promise<void> {
    return this.objects.delete(`${WAITING}${writer}`);
  }

  async othersWaiting(writer: string, freshMs: number): Promise<boolean> {
    const now = Date.now() + (this.objects.clockOffsetMs?.() ?? 0); // (the storage's clock)
    let waiting = false;
    for await (const o of listAll(this.objects, WAITING)) {
      if (o.key === `${WAITING}${writer}`) continue;
      const age = now - o.modified;
      if (age < freshMs) waiting = true;
      else if (age > STALE_MARK_MS) void this.objects.delete(o.key).catch(() => undefined);
    }
    return waiting;
  }

  async #names(prefix: string, startAfter?: string): Promise<string[]> {
    const names: string[] = [];
    for await (const o of listAll(this.objects, prefix, startAfter)) {
      const name = o.key.slice(prefix.length);
      if (NAME.test(name)) names.push(name);
    }
    return names;
  }
}
