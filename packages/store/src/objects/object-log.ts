/**
 * The catalog's objects in an object store (decision 0040): `kura-store.json`, `log/<20
 * digits>` (one commit each, created only if absent) and `checkpoints/<20 digits>`, named as in
 * a store directory (FORMAT.md §5). Segments are never appended to: a writer publishes each
 * commit as a segment of its own (catalog/object-commits.ts).
 */
import { InternalError } from '@kura/core';
import type { LogStore, SegmentAppender } from '../catalog/log-store.js';
import { isNotFound, listAll, type ObjectStore } from './object-store.js';

export const CONFIG_KEY = 'kura-store.json';
const LOG = 'log/';
const CHECKPOINTS = 'checkpoints/';
const NAME = /^[0-9]{20}$/;

export class ObjectLogStore implements LogStore {
  constructor(readonly objects: ObjectStore) {}

  async readConfig(): Promise<Uint8Array | undefined> {
    try {
      return await this.objects.get(CONFIG_KEY);
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  createConfig(bytes: Uint8Array): Promise<boolean> {
    return this.objects.create(CONFIG_KEY, bytes);
  }

  segments(): Promise<string[]> {
    return this.#names(LOG);
  }

  /** Segment names after `name` (one LIST when nothing is new). */
  segmentsAfter(name: string): Promise<string[]> {
    return this.#names(LOG, name ? `${LOG}${name}` : undefined);
  }

  readSegment(name: string): Promise<Uint8Array> {
    return this.objects.get(`${LOG}${name}`);
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

  readCheckpoint(name: string): Promise<Uint8Array> {
    return this.objects.get(`${CHECKPOINTS}${name}`);
  }

  createCheckpoint(name: string, bytes: Uint8Array): Promise<boolean> {
    return this.objects.create(`${CHECKPOINTS}${name}`, bytes);
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
