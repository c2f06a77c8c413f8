/**
 * Commit frames (FORMAT.md §15.2): how one commit is laid out in a log segment, and how a
 * segment's bytes are read back into commits. A frame that is short, or whose hash does not
 * match its bytes, is not a commit: a reader stops there (a torn tail left by a crash).
 *
 *   offset 0   magic "KLG1"
 *          4   body length n (u32, little-endian)
 *          8   seq (u64, little-endian)
 *         16   prev: the hash of the commit before (32 bytes; zeros before the first)
 *         48   body: n bytes of UTF-8 JSON
 *       48+n   hash: SHA-256 of bytes [0, 48+n)
 *
 * An encrypted store's frames (FORMAT.md §17.6) have the magic "KLE1" and a sealed body, bound
 * to the seq and prev; the hash covers the frame as written.
 */
import { sha256Bytes } from '../sha256-bytes.js';
import { SEALED_FRAME_MAGIC, type Sealing } from '../encryption/sealing.js';

export const FRAME_MAGIC = new Uint8Array([0x4b, 0x4c, 0x47, 0x31]); // "KLG1"
export const FRAME_HEAD = 48;
export const FRAME_OVERHEAD = FRAME_HEAD + 32;
/** Largest body a frame may carry (a snapshot of a large tree is the biggest commit). */
export const MAX_BODY = 256 * 1024 * 1024;
export const ZERO_HASH = new Uint8Array(32);

export interface Frame {
  seq: number;
  prev: Uint8Array;
  body: Uint8Array;
  hash: Uint8Array;
  /** Where the frame starts in its segment, and its length. */
  offset: number;
  length: number;
  /** Its body is sealed (an encrypted store's frame: magic KLE1). */
  sealed: boolean;
}

const encoder = new TextEncoder();

/**
 * One commit as bytes, and its hash (the next commit's `prev`). A string body is UTF-8 encoded
 * straight into the frame (a large put's body is megabytes: no second copy when it is ASCII).
 * The header is written byte by byte: a DataView and a BigInt made per frame were a visible
 * part of a single metadata update's time.
 */
export function encodeFrame(seq: number, prev: Uint8Array, body: Uint8Array | string, sealing?: Sealing): { bytes: Uint8Array; hash: Uint8Array } {
  if (!Number.isSafeInteger(seq) || seq < 1) throw new RangeError(`a commit's seq is a positive integer, not ${seq}`);
  if (sealing) return frameOf(seq, prev, sealing.sealBody(seq, prev, typeof body === 'string' ? encoder.encode(body) : body), SEALED_FRAME_MAGIC);
  return frameOf(seq, prev, body, FRAME_MAGIC);
}

function frameOf(seq: number, prev: Uint8Array, body: Uint8Array | string, magic: Uint8Array): { bytes: Uint8Array; hash: Uint8Array } {
  let bytes: Uint8Array;
  let n: number;
  if (typeof body === 'string') {
    bytes = new Uint8Array(FRAME_OVERHEAD + body.length);
    const r = encoder.encodeInto(body, bytes.subarray(FRAME_HEAD, FRAME_HEAD + body.length));
    if (r.read === body.length && r.written === body.length) n = body.length;
    else return frameOf(seq, prev, encoder.encode(body), magic); // not ASCII: its length first
  } else {
    n = body.length;
    bytes = new Uint8Array(FRAME_OVERHEAD + n);
    bytes.set(body, FRAME_HEAD);
  }
  if (n > MAX_BODY) throw new RangeError(`a commit body is at most ${MAX_BODY} bytes; this one is ${n}`);
  bytes.set(magic, 0);
  putU32(bytes, 4, n);
  putU32(bytes, 8, seq % 0x1_0000_0000); // seq as a u64: low word, then high
  putU32(bytes, 12, Math.floor(seq / 0x1_0000_0000));
  bytes.set(prev, 16);
  const hash = sha256Bytes(bytes.subarray(0, FRAME_HEAD + n));
  bytes.set(hash, FRAME_HEAD + n);
  return { bytes, hash };
}

function putU32(bytes: Uint8Array, at: number, v: number): void {
  bytes[at] = v & 0xff;
  bytes[at + 1] = (v >>> 8) & 0xff;
  bytes[at + 2] = (v >>> 16) & 0xff;
  bytes[at + 3] = v >>> 24;
}

/**
 * The frame at `offset`, or undefined when the bytes there are not a whole, intact frame.
 * Does not check the chain (`seq`, `prev`): readFrames does.
 */
export function decodeFrame(bytes: Uint8Array, offset: number): Frame | undefined {
  if (bytes.length - offset < FRAME_OVERHEAD) return undefined;
  const sealed = frameMagicAt(bytes, offset);
  if (sealed === undefined) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset + offset);
  const n = view.getUint32(4, true);
  if (n > MAX_BODY || bytes.length - offset < FRAME_OVERHEAD + n) return undefined;
  const seq = view.getBigUint64(8, true);
  if (seq < 1n || seq > BigInt(Number.MAX_SAFE_INTEGER)) return undefined;
  const hash = bytes.subarray(offset + FRAME_HEAD + n, offset + FRAME_OVERHEAD + n);
  const want = sha256Bytes(bytes.subarray(offset, offset + FRAME_HEAD + n));
  for (let i = 0; i < 32; i++) if (hash[i] !== want[i]) return undefined;
  return {
    seq: Number(seq),
    prev: bytes.subarray(offset + 16, offset + FRAME_HEAD),
    body: bytes.subarray(offset + FRAME_HEAD, offset + FRAME_HEAD + n),
    hash,
    offset,
    length: FRAME_OVERHEAD + n,
    sealed,
  };
}

/** Whether `bytes` hold a frame's magic at `at`: false for KLG1, true for KLE1 (sealed), undefined for neither. */
export function frameMagicAt(bytes: Uint8Array, at = 0): boolean | undefined {
  if (bytes.length < at + 4) return undefined;
  let plain = true;
  let sealed = true;
  for (let i = 0; i < 4; i++) {
    plain &&= bytes[at + i] === FRAME_MAGIC[i];
    sealed &&= bytes[at + i] === SEALED_FRAME_MAGIC[i];
  }
  return plain ? false : sealed ? true : undefined;
}

export function sameHash(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export interface SegmentRead {
  frames: Frame[];
  /** The offset after the last intact frame: anything from here on is not a commit. */
  end: number;
}

/** The intact frames of a segment from `offset` on, stopping at the first that is not. */
export function readFrames(bytes: Uint8Array, offset = 0): SegmentRead {
  const frames: Frame[] = [];
  let at = offset;
  for (;;) {
    const f = decodeFrame(bytes, at);
    if (!f) break;
    frames.push(f);
    at += f.length;
  }
  return { frames, end: at };
}

/**
 * Where an intact frame starts in `bytes` after `from` (the end of the last intact frame read),
 * if one does: then the bytes between are damage in the middle of the log, not an append a
 * crash tore (a torn append is the segment's last bytes, never followed by a whole commit).
 * Cut as a torn tail, every later commit was lost for good (a trial).
 */
export function intactFrameAfter(bytes: Uint8Array, from: number): number | undefined {
  for (let at = from + 1; at + FRAME_OVERHEAD <= bytes.length; at++) {
    if (frameMagicAt(bytes, at) !== undefined && decodeFrame(bytes, at)) return at;
  }
  return undefined;
}

/**
 * Why the bytes of a segment from `end` (the end of its last intact frame) cannot be what a
 * crash leaves of an append — undefined when they can. A crash leaves a prefix of the one frame
 * being appended, short of the length its header gives (a process killed in its write), or,
 * where a file system extends a file before its data reaches the disk (power lost), that region
 * as zeros. Anything else is damage: a whole commit after them (damage inside the log), or a
 * frame there at its full length that fails its check — a commit appended whole, perhaps
 * acknowledged, damaged since. (Cut as a torn tail, such a commit was lost without a word and
 * verify said ok after a rebuild: a trial.) `base`: where `bytes` begin in the segment.
 */
export function tailDamage(bytes: Uint8Array, end: number, base = 0): { offset: number; why: string } | undefined {
  const next = intactFrameAfter(bytes, end);
  if (next !== undefined) return { offset: base + end, why: `a whole commit follows at ${base + next}, so this is no torn append` };
  const tail = bytes.subarray(end);
  if (zeros(tail)) return undefined;
  const head = tail.subarray(0, 4);
  const magic = (m: Uint8Array) => head.every((b, i) => b === m[i]);
  if (!magic(FRAME_MAGIC) && !magic(SEALED_FRAME_MAGIC)) return { offset: base + end, why: 'its bytes are no commit\'s (an append begins with a frame\'s magic)' };
  if (tail.length < 8) return undefined; // (a prefix of a header)
  const n = new DataView(tail.buffer, tail.byteOffset).getUint32(4, true);
  if (n > MAX_BODY) return { offset: base + end, why: `the frame there says a body of ${n} bytes, more than any commit has` };
  const whole = FRAME_OVERHEAD + n;
  if (tail.length < whole) {
    // Cut short, the append never ended — unless the bytes are a whole frame of their own
    // length whose length field alone was changed (a longer length reads as a cut).
    if (tail.length >= FRAME_OVERHEAD && tail.length - FRAME_OVERHEAD <= MAX_BODY) {
      const mended = Uint8Array.from(tail);
      new DataView(mended.buffer).setUint32(4, tail.length - FRAME_OVERHEAD, true);
      if (decodeFrame(mended, 0)) return { offset: base + end, why: 'the commit there is whole but its length field is damaged' };
    }
    return undefined;
  }
  // At its full length: a power loss that left its end unwritten (zeros), or damage.
  if (zeros(tail.subarray(whole - 32))) return undefined;
  return { offset: base + end, why: 'the commit there is whole but fails its check (damaged since it was written)' };
}

function zeros(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) if (bytes[i] !== 0) return false;
  return true;
}

/** A segment's object name: the seq of its first commit, 20 digits (lexicographic = numeric). */
export function segmentName(firstSeq: number): string {
  return String(firstSeq).padStart(20, '0');
}

export function parseSegmentName(name: string): number | undefined {
  return /^[0-9]{20}$/.test(name) ? Number(name) : undefined;
}
