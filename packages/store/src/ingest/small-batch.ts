/**
 * A worker's answer to a batch of small sources, packed into one buffer (protocol.ts 'small'):
 * one transfer instead of a structured clone of an object, two strings and a buffer per chunk.
 * Measured on batches of 256 ~2.5 KB files: the clone cost 4-9 µs per file between the two
 * threads, the packed buffer ~0.5; and the store's thread no longer sweeps an ArrayBuffer per
 * chunk.
 *
 * Layout (little-endian): u32 count, then per source a u8 kind:
 * - 0 (ingested): digest as 64 ASCII hex digits, f64 size, u32 chunk count, and per chunk its
 *   key as 64 ASCII hex digits, u32 length, u8 codec, then u32 payload length and the payload —
 *   or, a member of one of the batch's groups (codec 2, chunk-groups.ts), u32 group index and
 *   u32 place in the group's raw bytes;
 * - 1 (failed): u32 index into the message's `errors`;
 * - 2 (not read: at least the request's `statMax` bytes).
 * Kinds 0 and 2 with bit 0x80 set are followed by the file's stat (what it was when opened):
 * mode, dev, ino, size, mtimeMs, ctimeMs as f64. Kind 0 with bit 0x40 set ends with the
 * source's first bytes, for the search index (u32 length, the bytes; text-heads.ts); with bit
 * 0x20 set, the source changed while it was read (StreamResult `changed`).
 * After the sources: u32 group count, and per group u32 raw length, u32 frame length, the frame
 * (its members are the chunks that name it, in order of their places).
 * Hex travels as ASCII because both sides want strings (map keys, digests).
 */
import type { CodecId } from '@kura/core';
import type { StreamResult } from '../put.js';
import { CODEC_GROUP } from '../bytes/pack-record.js';
import type { ChunkGroup, StreamChunk } from './chunk-groups.js';
import type { ErrorShape } from './protocol.js';

/** What a file was when a worker opened it (a snapshot's stamp and entry: node/snapshots.ts). */
export interface SourceStat {
  mode: number;
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
}

const STAT_FIELDS = ['mode', 'dev', 'ino', 'size', 'mtimeMs', 'ctimeMs'] as const;
const WITH_STAT = 0x80;
const WITH_HEAD = 0x40;
const CHANGED = 0x20;

/** One small source's ingest, whole, as the worker has it before packing. */
export type SmallResult =
  | { chunks: StreamChunk[]; digest: `sha256:${string}`; size: number; count: number; stat?: SourceStat | undefined; head?: Uint8Array | undefined; changed?: true }
  | { error: ErrorShape }
  | { large: SourceStat };

export interface PackedSmall {
  packed: ArrayBuffer;
  errors: ErrorShape[];
}

const HEX = 64;

function writeAscii(out: Uint8Array, at: number, s: string, from: number): void {
  for (let i = 0; i < HEX; i++) out[at + i] = s.charCodeAt(from + i);
}

export function packSmallResults(results: readonly SmallResult[]): PackedSmall {
  let total = 8;
  const groups = new Map<ChunkGroup, number>();
  for (const r of results) {
    total += 1;
    if ('error' in r) total += 4;
    else if ('large' in r) total += 8 * STAT_FIELDS.length;
    else {
      total += HEX + 8 + 4 + (r.stat ? 8 * STAT_FIELDS.length : 0) + (r.head ? 4 + r.head.length : 0);
      for (const c of r.chunks) {
        total += HEX + 4 + 1 + (c.group ? 8 : 4 + c.payload.length);
        if (c.group && !groups.has(c.group)) {
          groups.set(c.group, groups.size);
          total += 8 + c.group.frame.length;
        }
      }
    }
  }
  const out = new Uint8Array(total);
  const dv = new DataView(out.buffer);
  const errors: ErrorShape[] = [];
  let at = 4;
  const writeStat = (stat: SourceStat) => {
    for (const field of STAT_FIELDS) {
      dv.setFloat64(at, stat[field], true);
      at += 8;
    }
  };
  dv.setUint32(0, results.length, true);
  for (const r of results) {
    if ('error' in r) {
      out[at] = 1;
      dv.setUint32(at + 1, errors.length, true);
      errors.push(r.error);
      at += 5;
      continue;
    }
    if ('large' in r) {
      out[at++] = 2 | WITH_STAT;
      writeStat(r.large);
      continue;
    }
    out[at++] = (r.stat ? WITH_STAT : 0) | (r.head ? WITH_HEAD : 0) | (r.changed ? CHANGED : 0);
    if (r.stat) writeStat(r.stat);
    writeAscii(out, at, r.digest, 7);
    dv.setFloat64(at + HEX, r.size, true);
    dv.setUint32(at + HEX + 8, r.chunks.length, true);
    at += HEX + 12;
    for (const c of r.chunks) {
      writeAscii(out, at, c.key, 0);
      dv.setUint32(at + HEX, c.length, true);
      if (c.group) {
        out[at + HEX + 4] = CODEC_GROUP;
        dv.setUint32(at + HEX + 5, groups.get(c.group)!, true);
        dv.setUint32(at + HEX + 9, c.at!, true);
        at += HEX + 13;
        continue;
      }
      out[at + HEX + 4] = c.codec;
      dv.setUint32(at + HEX + 5, c.payload.length, true);
      out.set(c.payload, at + HEX + 9);
      at += HEX + 9 + c.payload.length;
    }
    if (r.head) {
      dv.setUint32(at, r.head.length, true);
      out.set(r.head, at + 4);
      at += 4 + r.head.length;
    }
  }
  dv.setUint32(at, groups.size, true);
  at += 4;
  for (const g of groups.keys()) {
    dv.setUint32(at, g.rawLen, true);
    dv.setUint32(at + 4, g.frame.length, true);
    out.set(g.frame, at + 8);
    at += 8 + g.frame.length;
  }
  return { packed: out.buffer, errors };
}

/** A source ingested whole: its chunks in order and its digest, size and chunk count. */
export interface ReadyChunks {
  chunks: StreamChunk[];
  result: StreamResult;
  /** What the file was when the worker opened it, when the request asked (`statMax`). */
  stat?: SourceStat | undefined;
}

/** A file the worker did not read: at least the request's `statMax` bytes. */
export interface TooLarge {
  large: SourceStat;
}

const ascii = new TextDecoder('latin1');

/**
 * A digest's text is decoded whole from here, prefix and all: a string made by concatenation
 * is a rope, which the operation's apply then flattened (a copy per file) before it read a digit.
 */
const PREFIX = 'sha256:';
const DIGEST_TEXT = new Uint8Array(PREFIX.length + HEX);
for (let i = 0; i < PREFIX.length; i++) DIGEST_TEXT[i] = PREFIX.charCodeAt(i);

/** Per source, its chunks (payloads are views of `packed`), its error, or its stat alone. */
export function unpackSmallResults(p: PackedSmall): (ReadyChunks | TooLarge | ErrorShape)[] {
  const bytes = new Uint8Array(p.packed);
  const dv = new DataView(p.packed);
  const count = dv.getUint32(0, true);
  const out: (ReadyChunks | TooLarge | ErrorShape)[] = [];
  // The batch's groups, made as their first member is met; frames and raw lengths come last.
  const groups: ChunkGroup[] = [];
  const places: { at: number; key: string; length: number }[][] = [];
  let at = 4;
  const readStat = (): SourceStat => {
    // In STAT_FIELDS' order (packSmallResults).
    const stat = { mode: dv.getFloat64(at, true), dev: dv.getFloat64(at + 8, true), ino: dv.getFloat64(at + 16, true), size: dv.getFloat64(at + 24, true), mtimeMs: dv.getFloat64(at + 32, true), ctimeMs: dv.getFloat64(at + 40, true) };
    at += 8 * STAT_FIELDS.length;
    return stat;
  };
  for (let i = 0; i < count; i++) {
    const kind = bytes[at]!;
    if (kind === 1) {
      out.push(p.errors[dv.getUint32(at + 1, true)]!);
      at += 5;
      continue;
    }
    at++;
    const stat = kind & WITH_STAT ? readStat() : undefined;
    if ((kind & ~WITH_STAT & ~WITH_HEAD & ~CHANGED) === 2) {
      out.push({ large: stat! });
      continue;
    }
    DIGEST_TEXT.set(bytes.subarray(at, at + HEX), PREFIX.length);
    const digest = ascii.decode(DIGEST_TEXT) as `sha256:${string}`;
    const size = dv.getFloat64(at + HEX, true);
    const n = dv.getUint32(at + HEX + 8, true);
    at += HEX + 12;
    const chunks: StreamChunk[] = [];
    let offset = 0;
    for (let j = 0; j < n; j++) {
      const length = dv.getUint32(at + HEX, true);
      const key = ascii.decode(bytes.subarray(at, at + HEX));
      if (bytes[at + HEX + 4] === CODEC_GROUP) {
        const g = dv.getUint32(at + HEX + 5, true);
        const place = dv.getUint32(at + HEX + 9, true);
        const group = (groups[g] ??= { frame: EMPTY, rawLen: 0, members: [] });
        (places[g] ??= []).push({ at: place, key, length });
        chunks.push({ offset, length, key, codec: 0, payload: EMPTY, group, at: place });
        at += HEX + 13;
      } else {
        const stored = dv.getUint32(at + HEX + 5, true);
        chunks.push({ offset, length, key, codec: bytes[at + HEX + 4] as CodecId, payload: bytes.subarray(at + HEX + 9, at + HEX + 9 + stored) });
        at += HEX + 9 + stored;
      }
      offset += length;
    }
    const result: StreamResult = { digest, size, chunks: n };
    if (kind & CHANGED) result.changed = true;
    if (kind & WITH_HEAD) {
      // A copy: a view would keep the whole message alive as long as the index keeps the head.
      const length = dv.getUint32(at, true);
      result.head = bytes.slice(at + 4, at + 4 + length);
      at += 4 + length;
    }
    out.push(stat ? { chunks, result, stat } : { chunks, result });
  }
  const groupCount = dv.getUint32(at, true);
  at += 4;
  for (let g = 0; g < groupCount; g++) {
    const group = groups[g]!;
    group.rawLen = dv.getUint32(at, true);
    const frameLength = dv.getUint32(at + 4, true);
    group.frame = bytes.subarray(at + 8, at + 8 + frameLength);
    group.members = places[g]!.sort((a, b) => a.at - b.at).map(({ key, length }) => ({ key, length }));
    at += 8 + frameLength;
  }
  return out;
}

const EMPTY = new Uint8Array(0);
