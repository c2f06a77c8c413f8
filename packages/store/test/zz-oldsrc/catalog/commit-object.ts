/**
 * The object a commit is published as on an object store (decision 0040), and its conditional
 * create, tried again while the storage does not answer.
 */
import { InternalError } from '@kura/core';
import type { LogStore } from './log-store.js';
import { carriedBytes, type Op } from './ops.js';

/**
 * A commit's log object: its frame, then the bytes of the pack it carries, if one of its
 * operations is an inline `pack` (decision 0044: one request for a commit of small puts).
 */
export function withCarried(frame: Uint8Array, ops: readonly Op[]): Uint8Array {
  const carried = ops.map(carriedBytes).filter((b) => b !== undefined);
  if (carried.length === 0) return frame;
  if (carried.length > 1) throw new InternalError(`a commit carries one pack at most, not ${carried.length}`);
  const bytes = new Uint8Array(frame.length + carried[0]!.length);
  bytes.set(frame);
  bytes.set(carried[0]!, frame.length);
  return bytes;
}

/** Attempts at creating one commit object when the storage does not answer (each create recognises its own earlier success). */
const CREATE_ATTEMPTS = 4;

/**
 * Creates the commit object, trying again when the storage does not answer: the create is
 * conditional and recognises its own bytes, so a retry of one whose answer was lost answers
 * true, and one that never arrived is simply made now.
 */
export async function createPatiently(store: LogStore, name: string, bytes: Uint8Array): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await store.createSegment(name, bytes);
    } catch (e) {
      if ((e as { code?: unknown })?.code !== 'STORAGE_UNREACHABLE' || attempt >= CREATE_ATTEMPTS) throw e;
      await new Promise((r) => setTimeout(r, 20 * 3 ** attempt));
    }
  }
}
