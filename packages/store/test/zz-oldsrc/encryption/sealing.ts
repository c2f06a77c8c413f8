/**
 * The sealed forms of an encrypted store's objects (FORMAT.md §17, decision 0062), in one
 * place: the keys derived from the master key, the associated data that binds each sealed unit
 * to its place (a record to its pack and offset, a commit's body to its seq and the commit
 * before it, a checkpoint's block to its seq and index), and the layouts around the seals. The
 * codecs of packs, the log and checkpoints call these when their store has a Sealing; storage
 * backends never see a key.
 */
import { CorruptDataError, SEALED_OVERHEAD, deriveKey, keyedHash, seal, toHex, unseal } from '@kura/core';

/** The uses a master key is split into (FORMAT.md §17.2): each its own key. */
const USES = ['chunk names', 'packs', 'log', 'checkpoints', 'config'] as const;
type Use = (typeof USES)[number];

export const SEALED_RECORD_MAGIC = new TextEncoder().encode('KSRC');
/** A sealed record's framing: magic, length, nonce and tag around the §6 record. */
export const SEALED_RECORD_OVERHEAD = 8 + SEALED_OVERHEAD;
export const SEALED_INDEX_END = new TextEncoder().encode('KSND');
export const SEALED_FRAME_MAGIC = new TextEncoder().encode('KLE1');
export const SEALED_CHECKPOINT_MAGIC = new TextEncoder().encode('KCPS');
/** Plaintext bytes per checkpoint block (FORMAT.md §17.6). */
export const CHECKPOINT_BLOCK = 1 << 20;
/** What the configuration says of an encrypted store's scheme. */
export const ENCRYPTION_SCHEME = 'xchacha20-poly1305+blake3-keyed';

const ascii = new TextEncoder();

/** Associated data: `kura/<kind>` NUL, then the fields (strings as ASCII, numbers as u64 or as given). */
class Ad {
  readonly #parts: Uint8Array[] = [];
  constructor(kind: string) {
    this.#parts.push(ascii.encode(`kura/${kind}\0`));
  }
  text(s: string): this {
    this.#parts.push(ascii.encode(s), new Uint8Array(1));
    return this;
  }
  u64(n: number): this {
    const b = new Uint8Array(8);
    const v = new DataView(b.buffer);
    v.setUint32(0, n % 0x1_0000_0000, true);
    v.setUint32(4, Math.floor(n / 0x1_0000_0000), true);
    this.#parts.push(b);
    return this;
  }
  u32(n: number): this {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setUint32(0, n, true);
    this.#parts.push(b);
    return this;
  }
  u8(n: number): this {
    this.#parts.push(Uint8Array.of(n));
    return this;
  }
  raw(b: Uint8Array): this {
    this.#parts.push(b);
    return this;
  }
  bytes(): Uint8Array {
    return concat(this.#parts);
  }
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const u32At = (b: Uint8Array, at: number) => new DataView(b.buffer, b.byteOffset + at, 4).getUint32(0, true);

function u32(n: number): Uint8Array {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, n, true);
  return b;
}

function startsWith(b: Uint8Array, magic: Uint8Array, at = 0): boolean {
  if (b.length < at + magic.length) return false;
  for (let i = 0; i < magic.length; i++) if (b[at + i] !== magic[i]) return false;
  return true;
}

/** Opens a seal, naming what failed when it does (CORRUPT_DATA `unauthentic`). */
function opened(key: Uint8Array, sealed: Uint8Array, ad: Uint8Array, what: string, details: { key?: string } = {}): Uint8Array {
  try {
    return unseal(key, sealed, ad);
  } catch (e) {
    if (e instanceof CorruptDataError) throw new CorruptDataError(`${what} failed authentication: changed, cut, moved or sealed under another key`, 'unauthentic', details);
    throw e;
  }
}

/** An encrypted store's keys and sealed forms; made once the master key is unlocked. */
export class Sealing {
  readonly #keys: Record<Use, Uint8Array>;

  constructor(
    master: Uint8Array,
    /** The store's id (32 hex): bound into the log's, checkpoints' and configuration's seals. */
    readonly storeId: string,
  ) {
    this.#keys = Object.fromEntries(USES.map((u) => [u, deriveKey(`kura 2026-11-29 ${u}`, master)])) as Record<Use, Uint8Array>;
  }

  /** The key chunk names are keyed hashes under (FORMAT.md §17.4): ingest kernels take it. */
  get chunkNameKey(): Uint8Array {
    return this.#keys['chunk names'];
  }

  /** A chunk's name: the keyed BLAKE3 of its raw bytes, 64 hex. */
  chunkName(raw: Uint8Array): string {
    return toHex(keyedHash(this.#keys['chunk names'], raw));
  }

  // ---- packs (FORMAT.md §17.5) ----

  /** The sealed record for the §6 record `parts` at `offset` of pack `pack`. */
  sealRecord(pack: string, offset: number, parts: readonly Uint8Array[]): Uint8Array {
    const sealed = seal(this.#keys.packs, concat(parts), new Ad('record').text(pack).u64(offset).bytes());
    const out = new Uint8Array(8 + sealed.length);
    out.set(SEALED_RECORD_MAGIC, 0);
    out.set(u32(sealed.length), 4);
    out.set(sealed, 8);
    return out;
  }

  /** The §6 record inside the sealed record `bytes` read at `offset` of pack `pack`. */
  openRecord(pack: string, offset: number, bytes: Uint8Array, chunk?: string): Uint8Array {
    const where = `the record at ${pack}@${offset}`;
    const details = chunk ? { key: chunk } : {};
    if (!startsWith(bytes, SEALED_RECORD_MAGIC) || bytes.length < SEALED_RECORD_OVERHEAD) throw new CorruptDataError(`${where} is not a sealed record`, 'pack-record', details);
    const n = u32At(bytes, 4);
    if (n !== bytes.length - 8) throw new CorruptDataError(`${where} says ${n} sealed bytes where ${bytes.length - 8} were read`, 'pack-record', details);
    return opened(this.#keys.packs, bytes.subarray(8), new Ad('record').text(pack).u64(offset).bytes(), where, details);
  }

  /** A pack's §6 index, sealed for its tail. */
  sealIndex(pack: string, index: Uint8Array): Uint8Array {
    const sealed = seal(this.#keys.packs, index, new Ad('index').text(pack).bytes());
    return concat([sealed, u32(sealed.length + 8), SEALED_INDEX_END]);
  }

  /**
   * The §6 index sealed at the end of `tail` (a pack's last bytes), or undefined when the pack
   * has none (open, or sealed for a writer that died).
   */
  openIndex(pack: string, tail: Uint8Array): Uint8Array | undefined {
    const n = tail.length;
    if (n < 8 + SEALED_OVERHEAD || !startsWith(tail, SEALED_INDEX_END, n - 4)) return undefined;
    const length = u32At(tail, n - 8);
    if (length > n || length < 8 + SEALED_OVERHEAD) throw new CorruptDataError(`pack ${pack}: its sealed index claims ${length} bytes`, 'pack-index');
    return opened(this.#keys.packs, tail.subarray(n - length, n - 8), new Ad('index').text(pack).bytes(), `pack ${pack}'s index`);
  }

  // ---- the log (FORMAT.md §17.6) ----

  /** A commit's body, sealed to its seq and the hash of the commit before it. */
  sealBody(seq: number, prev: Uint8Array, body: Uint8Array): Uint8Array {
    return seal(this.#keys.log, body, new Ad('log').text(this.storeId).u64(seq).raw(prev).bytes());
  }

  openBody(seq: number, prev: Uint8Array, sealed: Uint8Array): Uint8Array {
    return opened(this.#keys.log, sealed, new Ad('log').text(this.storeId).u64(seq).raw(prev).bytes(), `commit ${seq}'s body`);
  }

  // ---- checkpoints ----

  /** A checkpoint's bytes, sealed in blocks of at most 1 MiB. */
  sealCheckpoint(seq: number, bytes: Uint8Array): Uint8Array {
    const parts: Uint8Array[] = [SEALED_CHECKPOINT_MAGIC, u32(1)];
    const blocks = Math.max(1, Math.ceil(bytes.length / CHECKPOINT_BLOCK));
    for (let i = 0; i < blocks; i++) {
      const block = bytes.subarray(i * CHECKPOINT_BLOCK, Math.min(bytes.length, (i + 1) * CHECKPOINT_BLOCK));
      const sealed = seal(this.#keys.checkpoints, block, this.#checkpointAd(seq, i, i === blocks - 1));
      parts.push(u32(sealed.length), sealed);
    }
    return concat(parts);
  }

  openCheckpoint(seq: number, bytes: Uint8Array): Uint8Array {
    const bad = (why: string) => new CorruptDataError(`checkpoint ${seq}: ${why}`, 'checkpoint');
    if (!startsWith(bytes, SEALED_CHECKPOINT_MAGIC) || bytes.length < 8) throw bad('not a sealed checkpoint');
    if (u32At(bytes, 4) !== 1) throw bad(`sealed checkpoint version ${u32At(bytes, 4)}`);
    const blocks: Uint8Array[] = [];
    let at = 8;
    for (let i = 0; ; i++) {
      if (at + 4 > bytes.length) throw bad('cut before its last block');
      const n = u32At(bytes, at);
      if (at + 4 + n > bytes.length) throw bad(`block ${i} is cut`);
      const sealed = bytes.subarray(at + 4, at + 4 + n);
      at += 4 + n;
      const last = at === bytes.length;
      blocks.push(opened(this.#keys.checkpoints, sealed, this.#checkpointAd(seq, i, last), `checkpoint ${seq}'s block ${i}${last ? ' (its last)' : ''}`));
      if (last) return concat(blocks);
    }
  }

  #checkpointAd(seq: number, block: number, last: boolean): Uint8Array {
    return new Ad('checkpoint').text(this.storeId).u64(seq).u32(block).u8(last ? 1 : 0).bytes();
  }

  // ---- configuration ----

  sealConfig(json: Uint8Array): Uint8Array {
    return seal(this.#keys.config, json, new Ad('config').text(this.storeId).bytes());
  }

  openConfig(sealed: Uint8Array): Uint8Array {
    return opened(this.#keys.config, sealed, new Ad('config').text(this.storeId).bytes(), "the store's configuration");
  }
}
