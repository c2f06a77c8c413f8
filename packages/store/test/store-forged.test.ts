/**
 * Forged chunk records: a forger who can write the pack files AND kura.db plants records that
 * agree with their database rows (magic, codec, lengths, key), so every check that compares
 * the two passes, and only the payload — or a length nobody should trust — is hostile:
 * decompression bombs, frames that lie about their size, truncated or padded frames, flipped
 * codecs, lengths past the pack's end or beyond any chunk, bytes of the wrong hash. Every read
 * must fail with CORRUPT_DATA without returning a damaged byte or allocating what the forger
 * asks for; verify names each forged chunk and the document it breaks; the rest stays exact.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, cpSync, writeFileSync, mkdirSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { CODEC_RAW, CODEC_ZSTD, blake3, compress, decompress } from '@kura/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../src/node/index.js';
import { PACK_HEADER_SIZE, packHeader, recordHeader } from '../src/bytes/pack-record.js';
import { streamOf, trackedCore } from './helpers/backends.js';
import { recordReliability } from './helpers/reliability.js';
import { collect, concatBytes, expectSameBytes, randomBytes, reopen, tempDir, textBytes } from './helpers/store.js';
import { call, closeAll, errorCode, startServer } from '../../../apps/server/test/helpers/server.js';

const READER = fileURLToPath(new URL('./fixtures/forged-reader.mjs', import.meta.url));
const sha = (b: Uint8Array) => `sha256:${createHash('sha256').update(b).digest('hex')}`;
const GiB = 2 ** 30;
const U32_MAX = 2 ** 32 - 1;
/** The largest raw length the core's decompress accepts (MAX_FRAME_INPUT): 2 GiB - 1. */
const I32_MAX = 2 ** 31 - 1;
/**
 * Peak RSS allowed to the child that makes every hostile read and a verify. Measured here
 * (Node 20): ~67 MiB with the store open before the first hostile read, ~78 MiB after them all.
 * Any one bomb honoured adds >= 1 GiB (a reader that decoded to the frame's declared size and
 * compared lengths afterwards peaked at 2.1 GiB), the forged raw length 2 GiB: 256 MiB leaves
 * room for another Node or SQLite build, and none for a bomb.
 */
const READER_RSS_BOUND_MIB = 256;

// ---- hostile payloads ------------------------------------------------------------------------

const BLOCK_MAX = 128 << 10; // zstd's largest block (RFC 8878 Block_Maximum_Size)

/**
 * A valid zstd frame that decodes to `size` zero bytes: one RLE block (3-byte header + the
 * byte) per 128 KiB, so 1 GiB costs 32 KiB and 4 GiB 128 KiB — crafted rather than compressed,
 * so no test process ever holds the expansion. `declared` goes in the Frame_Content_Size field
 * (8 bytes), which may lie; undefined leaves the field out (as a streaming encoder does).
 */
function zeroFrame(size: number, declared: number | undefined): Uint8Array {
  const blocks = Math.ceil(size / BLOCK_MAX);
  const head = declared === undefined ? 6 : 14;
  const out = new Uint8Array(head + blocks * 4);
  out.set([0x28, 0xb5, 0x2f, 0xfd]); // magic, little-endian 0xFD2FB528
  // Frame_Header_Descriptor: FCS field of 8 bytes (flag 3) or none (flag 0), not single-segment
  // (so a Window_Descriptor follows), no checksum, no dictionary.
  out[4] = declared === undefined ? 0 : 0xc0;
  out[5] = (17 - 10) << 3; // window 2^17 = 128 KiB: the block size, nothing more
  if (declared !== undefined) new DataView(out.buffer).setBigUint64(6, BigInt(declared), true);
  let at = head;
  for (let i = 0, left = size; i < blocks; i++) {
    const n = Math.min(left, BLOCK_MAX);
    left -= n;
    const h = (i === blocks - 1 ? 1 : 0) + (1 << 1) + n * 8; // Last_Block | Block_Type RLE | Block_Size
    out.set([h & 0xff, (h >>> 8) & 0xff, h >>> 16, 0], at); // the block header, then the byte (0)
    at += 4;
  }
  return out;
}

/** Debian's zstd command, the reference implementation, on `input` (or a shell pipeline). */
function zstdCli(args: string[], input?: Uint8Array): { status: number | null; stdout: Buffer } {
  const r = spawnSync('sh', ['-c', `zstd ${args.join(' ')}`], { input, maxBuffer: 8 << 20 });
  return { status: r.status, stdout: r.stdout };
}

// ---- the cases -------------------------------------------------------------------------------

interface Forgery {
  codec: number;
  rawLen: number;
  storedLen: number;
  /** What follows the header in the pack (may be shorter than storedLen: the pack ends). */
  payload: Uint8Array;
}

interface Case {
  name: string;
  /** Text is stored as zstd, random data raw: the codec flips start from a real record of each. */
  data: 'text' | 'random';
  /** The real chunk's bytes and key in; the record the forger writes instead out. */
  forge: (real: Uint8Array, key: string) => Forgery;
  /** CorruptDataError.reason of a checked chunk read (chunk(), get, getRange, verify). */
  reason: string;
  /** getBytes hashes the whole document instead of each chunk, so it may name another reason. */
  wholeReason?: string;
  /** Bytes the payload would decode to if honoured (for the figures). */
  expands?: number;
}

const zstdRecord = (real: Uint8Array, payload: Uint8Array, rawLen = real.length): Forgery => ({ codec: CODEC_ZSTD, rawLen, storedLen: payload.length, payload });
let cliBomb: Uint8Array; // made in beforeAll: the zstd command takes a second

const CASES: Case[] = [
  { name: 'zstd bomb declaring 1 GiB', data: 'text', reason: 'too-large', expands: GiB, forge: (real) => zstdRecord(real, zeroFrame(GiB, GiB)) },
  {
    name: 'zstd bomb declaring the real raw length while holding 1 GiB',
    data: 'text',
    reason: 'too-large',
    expands: GiB,
    forge: (real) => zstdRecord(real, zeroFrame(GiB, real.length)),
  },
  { name: 'zstd bomb without a content size (crafted)', data: 'text', reason: 'too-large', expands: GiB, forge: (real) => zstdRecord(real, zeroFrame(GiB, undefined)) },
  { name: 'zstd bomb from the zstd command (1 GiB of zeros through a pipe)', data: 'text', reason: 'too-large', expands: GiB, forge: (real) => zstdRecord(real, cliBomb) },
  {
    // The bound itself is hostile: header and row agree on 4 GiB, and so does the frame.
    name: 'raw_len forged to 2^32-1 with a frame declaring it',
    data: 'text',
    reason: 'too-large',
    expands: U32_MAX,
    forge: (real) => zstdRecord(real, zeroFrame(U32_MAX, U32_MAX), U32_MAX),
  },
  {
    // The largest length the codec itself accepts: only the store can know it is no chunk's.
    name: 'raw_len forged to 2^31-1 with a frame declaring it',
    data: 'text',
    reason: 'too-large',
    expands: I32_MAX,
    forge: (real) => zstdRecord(real, zeroFrame(I32_MAX, I32_MAX), I32_MAX),
  },
  {
    name: 'truncated frame',
    data: 'text',
    reason: 'corrupt-frame',
    forge: (real) => {
      const frame = compress(real);
      return zstdRecord(real, frame.subarray(0, frame.length >> 1));
    },
  },
  {
    name: 'trailing garbage after a valid frame',
    data: 'text',
    reason: 'corrupt-frame',
    forge: (real) => zstdRecord(real, concatBytes([compress(real), new TextEncoder().encode('GARBAGE')])),
  },
  {
    name: 'codec flipped raw -> zstd in header and row',
    data: 'random',
    reason: 'corrupt-frame',
    forge: (real) => zstdRecord(real, real),
  },
  {
    // The frame comes back as if it were the raw bytes: the key (or the manifest length) says no.
    name: 'codec flipped zstd -> raw in header and row',
    data: 'text',
    reason: 'key-mismatch',
    wholeReason: 'manifest',
    forge: (real) => {
      const frame = compress(real);
      return { codec: CODEC_RAW, rawLen: real.length, storedLen: frame.length, payload: frame };
    },
  },
  {
    name: 'reserved codec byte 2 in header and row',
    data: 'text',
    reason: 'pack-record',
    forge: (real) => ({ codec: 2, rawLen: real.length, storedLen: real.length, payload: real }),
  },
  {
    name: "stored_len past the pack's end",
    data: 'random',
    reason: 'pack-record',
    forge: (real) => ({ codec: CODEC_RAW, rawLen: real.length, storedLen: real.length, payload: real.subarray(0, real.length >> 1) }),
  },
  {
    // Reading the record would allocate stored_len bytes before finding the pack short.
    name: 'stored_len forged to 2^32-1',
    data: 'random',
    reason: 'too-large',
    forge: (real) => ({ codec: CODEC_RAW, rawLen: real.length, storedLen: U32_MAX, payload: real }),
  },
  {
    // Only the row can say it (the header's u32 reads 2^32-100): a negative read length.
    name: 'stored_len forged negative in the row',
    data: 'random',
    reason: 'pack-record',
    forge: (real) => ({ codec: CODEC_RAW, rawLen: real.length, storedLen: -100, payload: real }),
  },
  {
    name: 'a frame that decodes fine to bytes of another hash',
    data: 'text',
    reason: 'key-mismatch',
    forge: (real) => zstdRecord(real, compress(textBytes(7777, real.length))),
  },
  {
    name: 'raw bytes of another hash',
    data: 'random',
    reason: 'key-mismatch',
    forge: (real) => ({ codec: CODEC_RAW, rawLen: real.length, storedLen: real.length, payload: randomBytes(7778, real.length) }),
  },
];

// ---- the forged store ------------------------------------------------------------------------

interface Victim {
  case: Case;
  digest: string;
  bytes: Uint8Array;
  /** The forged chunk: the document's second, so a stream yields the first before failing. */
  key: string;
  start: number;
  end: number;
  /** The first chunk, left alone. */
  firstLength: number;
}

let dir: string;
let victims: Victim[];
let bystander: { digest: string; bytes: Uint8Array };

/**
 * Appends a record to a new pack (its own file and `packs` row, as the writer would have made
 * it) and points the chunk's row at it with the forged codec and lengths: header and row agree.
 */
function plant(db: Database.Database, key: string, name: string, f: Forgery): void {
  const file = join(dir, 'packs', name.slice(0, 2), `${name}.pack`);
  mkdirSync(join(dir, 'packs', name.slice(0, 2)), { recursive: true });
  const header = recordHeader({ key, codec: f.codec, rawLen: f.rawLen, storedLen: f.storedLen });
  writeFileSync(file, packHeader());
  appendFileSync(file, concatBytes([header, f.payload]));
  const size = PACK_HEADER_SIZE + header.length + f.payload.length;
  const packId = db.prepare('INSERT INTO packs(name, size, sealed, created_at) VALUES (?, ?, 1, ?)').run(name, size, Date.now()).lastInsertRowid;
  const changed = db
    .prepare('UPDATE chunks SET pack_id = ?, offset = ?, raw_len = ?, stored_len = ?, codec = ?, group_at = NULL WHERE key = ?')
    .run(packId, PACK_HEADER_SIZE, f.rawLen, f.storedLen, f.codec, Buffer.from(key, 'hex')).changes;
  expect(changed).toBe(1);
}

beforeAll(async () => {
  // A real encoder's bomb: the command reads a pipe, so it cannot declare the content size.
  const cli = spawnSync('sh', ['-c', `head -c ${GiB} /dev/zero | zstd -q -1 -c`], { maxBuffer: 8 << 20 });
  expect(cli.status).toBe(0);
  cliBomb = new Uint8Array(cli.stdout);
  expect(cliBomb.length).toBeLessThan(64 << 10); // 1 GiB in < 64 KiB: a 30,000x expansion

  dir = join(tempDir('kura-forged-'), 'store');
  const store = await Store.init(dir); // default chunking: chunks of at most 64 KiB
  victims = [];
  for (const [i, c] of CASES.entries()) {
    const bytes = c.data === 'text' ? textBytes(100 + i, 90_000) : randomBytes(100 + i, 90_000);
    const { digest } = await store.put(bytes, { path: `victim-${i}` });
    const [first, second] = await store.manifest(digest);
    victims.push({ case: c, digest, bytes, key: second!.key, start: first!.length, end: first!.length + second!.length, firstLength: first!.length });
  }
  const b = concatBytes([textBytes(999, 60_000), randomBytes(999, 60_000)]);
  bystander = { digest: (await store.put(b, { path: 'bystander' })).digest, bytes: b };
  const reals = await Promise.all(victims.map((v) => store.chunk(v.key)));
  await store.close();

  const db = new Database(join(dir, 'kura.db'));
  try {
    for (const [i, v] of victims.entries()) {
      // The forgery starts from a real record of the codec the case assumes.
      const row = db.prepare('SELECT codec FROM chunks WHERE key = ?').get(Buffer.from(v.key, 'hex')) as { codec: number };
      // (Text is compressed: a zstd chunk record, or since grouped compression a group's member, codec 2.)
      expect(row.codec, v.case.name).toBe(v.case.data === 'text' ? 2 : CODEC_RAW);
      const name = createHash('sha256').update(v.case.name).digest('hex').slice(0, 32);
      plant(db, v.key, name, v.case.forge(reals[i]!, v.key));
    }
  } finally {
    db.close();
  }
});

afterAll(() => closeAll());

function expectCorrupt(e: unknown, v: Victim, reason: string, withDigest = true): void {
  expect(e, v.case.name).toMatchObject({ code: 'CORRUPT_DATA', reason, key: v.key, ...(withDigest ? { digest: v.digest } : {}) });
}

async function failure(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    (got) => {
      throw new Error(`a read of a forged record returned ${got instanceof Uint8Array ? `${got.length} bytes` : String(got)}`);
    },
    (e: unknown) => e,
  );
}

describe('forged chunk records', () => {
  it('the crafted bombs are real: the zstd command decodes them to their full size', () => {
    // `zstd -t` decodes without writing and checks the decoded size against the declared one,
    // so the declared frames are proven to expand to exactly 1 GiB and 4 GiB.
    expect(zstdCli(['-t', '-q'], zeroFrame(GiB, GiB)).status).toBe(0);
    expect(zstdCli(['-t', '-q'], zeroFrame(U32_MAX, U32_MAX)).status).toBe(0);
    expect(zstdCli(['-t', '-q'], zeroFrame(GiB, undefined)).status).toBe(0);
    // The frame that declares 64 KiB while holding 1 GiB is caught by the reference decoder too.
    expect(zstdCli(['-t', '-q'], zeroFrame(GiB, 65536)).status).not.toBe(0);
    // Small ones decode to exactly their zeros, with the command and with Kura's codec: the
    // refusals below are about size, not a frame Kura cannot parse.
    expectSameBytes(new Uint8Array(zstdCli(['-d', '-q', '-c'], zeroFrame(300_000, 300_000)).stdout), new Uint8Array(300_000));
    expectSameBytes(decompress(zeroFrame(300_000, 300_000), 300_000), new Uint8Array(300_000));
    expectSameBytes(decompress(zeroFrame(300_000, undefined), 300_000), new Uint8Array(300_000));
  });

  it.each(CASES.map((c, i) => [c.name, i] as const))('%s: every read fails with CORRUPT_DATA, returning nothing of the chunk', async (_name, i) => {
    const v = victims[i]!;
    const store = await reopen(dir, { readonly: true });
    expectCorrupt(await failure(store.chunk(v.key)), v, v.case.reason, false);
    expectCorrupt(await failure(store.getBytes(v.digest)), v, v.case.wholeReason ?? v.case.reason);
    // The stream fails before any byte of the forged chunk; what it gave before is the
    // document's own (a chunk is given once the next is checked: read.ts holds the last back).
    const pieces: Uint8Array[] = [];
    const streamed = await failure(
      (async () => {
        for await (const p of store.get(v.digest)) pieces.push(p.slice());
      })(),
    );
    expectCorrupt(streamed, v, v.case.reason);
    const given = concatBytes(pieces);
    expect(given.length).toBeLessThanOrEqual(v.start);
    expectSameBytes(given, v.bytes.subarray(0, given.length), 'bytes streamed before the forged chunk');
    // Ranges over the forged chunk: inside it, and across its start.
    expectCorrupt(await failure(store.getRange(v.digest, v.start + 1, v.end - 1)), v, v.case.reason);
    expectCorrupt(await failure(store.getRange(v.digest, v.start - 10, v.start + 10)), v, v.case.reason);
    expectCorrupt(await failure(collect(store.getRangeStream(v.digest, v.start, v.end))), v, v.case.reason);
    // The damage stays local: the document's first chunk still reads exactly.
    expectSameBytes(await store.getRange(v.digest, 0, v.firstLength), v.bytes.subarray(0, v.firstLength));
  });

  it('verify names every forged chunk and the document it breaks; the bystander stays exact', async () => {
    const store = await reopen(dir, { readonly: true });
    const report = await store.verify();
    expect(report.ok).toBe(false);
    const chunks = new Map(report.damagedChunks.map((c) => [c.key, c]));
    const docs = new Map(report.damagedDocuments.map((d) => [d.digest, d]));
    for (const v of victims) {
      expect(chunks.get(v.key), v.case.name).toMatchObject({ reason: v.case.reason, documents: [v.digest] });
      expect(docs.get(v.digest), v.case.name).toMatchObject({ chunks: [v.key] });
    }
    expect(report.damagedChunks).toHaveLength(CASES.length); // nothing else flagged
    expect(report.damagedDocuments).toHaveLength(CASES.length);
    expectSameBytes(await store.getBytes(bystander.digest), bystander.bytes);
    expectSameBytes(await collect(store.get(bystander.digest)), bystander.bytes);
    expectSameBytes(await store.getRange(bystander.digest, 50_000, 70_000), bystander.bytes.subarray(50_000, 70_000));
  });

  it('a commit naming a forged chunk is refused and stores nothing', async () => {
    // The chunk-sync commit (HTTP POST /v1/documents:commit) reads chunks back through the
    // same checked path: a forged record must not become a document's bytes.
    const copy = join(tempDir('kura-forged-'), 'store');
    cpSync(dir, copy, { recursive: true });
    const store = await reopen(copy);
    const before = (await store.stats()).documents;
    for (const v of victims) {
      expect(await failure(store.commitChunks([v.key])), v.case.name).toMatchObject({ code: 'CORRUPT_DATA', key: v.key });
    }
    expect((await store.stats()).documents).toBe(before);
  });

  it(`a reader process refuses every forged record below ${READER_RSS_BOUND_MIB} MiB peak RSS, though the bombs expand to >= 1 GiB`, () => {
    const plan = {
      bystander: bystander.digest,
      targets: victims.map((v) => ({ name: v.case.name, digest: v.digest, key: v.key, start: v.start + 1, end: v.end - 1 })),
    };
    const r = spawnSync(process.execPath, [READER, dir, JSON.stringify(plan)], { encoding: 'utf8', maxBuffer: 4 << 20, timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as {
      reads: { name: string; op: string; returned?: number; code?: string; key?: string }[];
      bystander: string;
      verify: { damagedChunks: { key: string; documents: string[] }[]; damagedDocuments: { digest: string }[] };
      rssBeforeMB: number;
      peakRssMB: number;
    };
    const byName = new Map(victims.map((v) => [v.case.name, v]));
    const returned = out.reads.filter((x) => x.returned !== undefined);
    expect(returned).toEqual([]);
    for (const x of out.reads) expect(x, `${x.name} ${x.op}`).toMatchObject({ code: 'CORRUPT_DATA', key: byName.get(x.name)!.key });
    expect(out.reads).toHaveLength(CASES.length * 4);
    expect(out.bystander).toBe(bystander.digest);
    const reported = out.verify.damagedChunks.filter((c) => {
      const v = victims.find((x) => x.key === c.key);
      return v !== undefined && c.documents.length === 1 && c.documents[0] === v.digest;
    });
    expect(reported).toHaveLength(CASES.length);
    expect(out.peakRssMB).toBeLessThan(READER_RSS_BOUND_MIB);
    console.log(`forged-reader: maxRSS ${out.rssBeforeMB.toFixed(1)} MiB before the hostile reads, ${out.peakRssMB.toFixed(1)} MiB after`);
    recordReliability('forged-records', 'decompression bombs and forged chunk records', {
      'hostile records planted': CASES.length,
      'reads refused with CORRUPT_DATA': out.reads.filter((x) => x.code === 'CORRUPT_DATA').length,
      'reads that returned bytes': returned.length,
      'reported by verify (chunk and document named)': reported.length,
      'peak reader RSS (MiB)': Math.round(out.peakRssMB),
      'reader RSS before the hostile reads (MiB)': Math.round(out.rssBeforeMB),
      'largest expansion attempted (MiB)': Math.round(Math.max(...CASES.map((c) => c.expands ?? 0)) / 2 ** 20),
    });
  });
});

describe('a forged document size', () => {
  it('is refused as CORRUPT_DATA before a buffer is sized by it, by whole and range reads alike', async () => {
    const dir = join(tempDir(), 'store');
    const data = randomBytes(77, 200_000);
    const s = await Store.init(dir, { chunking: { avg: 4096 } });
    const { digest } = await s.put(data);
    await s.close();
    for (const size of [2 ** 40, 3 * GiB, data.length + 1]) {
      const db = new Database(join(dir, 'kura.db'));
      db.prepare('UPDATE documents SET size = ?').run(size);
      db.close();
      const store = await Store.open(dir);
      await expect(store.getBytes(digest), `size ${size}`).rejects.toMatchObject({ code: 'CORRUPT_DATA', reason: 'manifest', digest });
      await expect(collect(store.getRangeStream(digest, 0, Math.min(size, data.length + 1))), `size ${size}`).rejects.toMatchObject({ code: 'CORRUPT_DATA', reason: 'manifest' });
      // A range the manifest does cover still reads exactly (its chunks are checked).
      expectSameBytes(await store.getRange(digest, 10, 5000), data.subarray(10, 5000), `size ${size}`);
      const report = await store.verify();
      expect(report.ok).toBe(false);
      expect(report.damagedDocuments.map((d) => d.digest)).toContain(digest);
      await store.close();
    }
  });
});

describe('a forged manifest: sound chunks of another document', () => {
  it('ends the stream short, before its last piece: an HTTP body is cut, never whole', async () => {
    const dir = join(tempDir(), 'store');
    const [one, two] = [randomBytes(78, 2_000_000), randomBytes(79, 2_000_000)];
    const s = await Store.init(dir);
    const a = await s.put(one, { path: 'one.bin' });
    await s.put(two, { path: 'two.bin' });
    await s.close();
    // The first document's row lists the second's chunks: each is sound, and the sizes agree.
    const db = new Database(join(dir, 'kura.db'));
    db.prepare('UPDATE documents SET manifest = (SELECT manifest FROM documents d2 WHERE d2.id <> documents.id), chunk_count = (SELECT chunk_count FROM documents d2 WHERE d2.id <> documents.id) WHERE digest = ?').run(Buffer.from(a.digest.slice(7), 'hex'));
    db.close();
    const store = await Store.open(dir);
    let streamed = 0;
    await expect(
      (async () => {
        for await (const piece of (await store.document(a.digest)).stream()) streamed += piece.length;
      })(),
    ).rejects.toMatchObject({ code: 'CORRUPT_DATA', reason: 'digest-mismatch' });
    expect(streamed).toBeLessThan(one.length);
    await store.close();
    // Over HTTP the status went first: the transfer fails short of its Content-Length.
    const server = await startServer({ store: dir });
    const got = await new Promise<{ status: number; bytes: number; failed: boolean }>((resolve) => {
      httpRequest(`${server.url}/v1/paths/one.bin`, (res) => {
        let bytes = 0;
        res.on('data', (d: Buffer) => (bytes += d.length));
        res.on('end', () => resolve({ status: res.statusCode!, bytes, failed: !res.complete }));
        res.on('error', () => resolve({ status: res.statusCode!, bytes, failed: true }));
        res.on('aborted', () => resolve({ status: res.statusCode!, bytes, failed: true }));
      }).end();
    });
    expect(got.status).toBe(200);
    expect(got.failed).toBe(true);
    expect(got.bytes).toBeLessThan(one.length);
  });
});

describe('chunks above the max chunk size', () => {
  it('are refused when written (INVALID_INPUT, nothing stored), since readers refuse them as damage', async () => {
    const { store } = await trackedCore({ compression: false, chunking: { avg: 1024 } }); // max 4 KiB
    await expect(store.putChunks(streamOf([randomBytes(1, 1000), randomBytes(2, 4097)]))).rejects.toMatchObject({ code: 'INVALID_INPUT', field: 'chunk' });
    const ok = await store.putChunks(streamOf([randomBytes(3, 4096)]));
    expect((await store.getBytes(ok.digest)).length).toBe(4096);
    expect((await store.stats()).documents).toBe(1);
    expect((await store.verify()).ok).toBe(true);
    await store.close();
  });
});

describe('HTTP chunk upload with hostile bodies', () => {
  // PUT /v1/chunks/{key} takes the raw chunk and POST /v1/documents:commit a JSON list of keys:
  // neither decodes a compressed body nor sizes a buffer from a client's length (bodies are
  // counted as they arrive, docs/HTTP.md). These pin that down.
  it('a zstd bomb sent with Content-Encoding: zstd is never inflated: refused (415), as every coded body is; sent as plain bytes it is stored as sent', async () => {
    // (Behaviour changed on purpose, 2026-11-30: a coded body was taken as its coded bytes —
    // stored, not inflated; now any Content-Encoding but identity is refused before the body.)
    const server = await startServer();
    const bomb = zeroFrame(GiB, GiB);
    const key = blake3(bomb);
    const coded = await call(server.url, 'PUT', `/v1/chunks/${key}`, { body: bomb, headers: { 'content-type': 'application/zstd', 'content-encoding': 'zstd' } });
    expect([coded.status, errorCode(coded)]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
    const res = await call(server.url, 'PUT', `/v1/chunks/${key}`, { body: bomb, headers: { 'content-type': 'application/zstd' } });
    expect(res.status).toBe(201);
    expectSameBytes(await server.app.store.chunk(key), bomb);
    const commit = await call(server.url, 'POST', '/v1/documents:commit', { json: { chunks: [key] } });
    expect(commit.status).toBe(201);
    expect(commit.json).toMatchObject({ digest: sha(bomb), size: bomb.length });
  });

  it('a gzip-encoded commit body is refused (415), not inflated', async () => {
    const server = await startServer();
    // 16 MiB of JSON whitespace in 16 KiB: parsed after inflating, it would be a valid body.
    const body = gzipSync(Buffer.concat([Buffer.from('{"chunks":[]'), Buffer.alloc(16 << 20, 0x20), Buffer.from('}')]));
    expect(body.length).toBeLessThan(64 << 10);
    const res = await call(server.url, 'POST', '/v1/documents:commit', { body, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } });
    expect(res.status).toBe(415); // (it was 400: the gzip bytes read as JSON; now a coded body is refused before it is read)
    expect(errorCode(res)).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('a chunk body declaring 4 GiB is refused with 413 once past the max chunk size', async () => {
    const server = await startServer();
    const max = (await call(server.url, 'GET', '/v1/config')).json.chunking.max as number;
    const key = '0'.repeat(64);
    const status = await new Promise<number>((resolve, reject) => {
      const u = new URL(`${server.url}/v1/chunks/${key}`);
      const req = httpRequest({ host: u.hostname, port: u.port, path: u.pathname, method: 'PUT', headers: { 'content-length': String(4 * GiB) } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
        req.destroy(); // the rest of the declared 4 GiB is never sent
      });
      req.on('error', (e) => (req.destroyed ? undefined : reject(e)));
      // Only a little more than the limit is ever sent: the answer must not wait for 4 GiB.
      req.write(Buffer.alloc(max + 1));
    });
    expect(status).toBe(413);
    expect((await call(server.url, 'GET', '/v1/config')).status).toBe(200); // still serving
  });
});
