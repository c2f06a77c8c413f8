/**
 * Encrypted stores (FORMAT.md §17, decision 0062), end to end: nothing readable at rest in a
 * store directory or in a real bucket (versitygw) — no marker word, path, tag, document digest
 * or chunk key, plain or keyed, and no zstd frame; every kind of object changed, swapped or
 * replayed is detected and named, never returned as data; a wrong password changes nothing;
 * a new cache rebuilds the whole store from its sealed objects.
 */
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ingester, blake3 } from '@kura/core';
import { Store, openKeyRing } from '../src/node/index.js';
import { openObjectLocation } from '../src/node/object-backends.js';
import { listAll } from '../src/objects/object-store.js';
import { MemoryObjectStore } from '../src/objects/memory-objects.js';
import { startS3Server, type S3Server } from './helpers/s3-servers.js';

const utf8 = (s: string) => new TextEncoder().encode(s);
const FAST = { memoryKib: 64, passes: 1, lanes: 1 };
const PASSWORD = 'correct horse battery staple';
const dirs: string[] = [];
const tmp = (name = 'kura-enc-') => {
  const d = mkdtempSync(join(tmpdir(), name));
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const WORDS = ['quetzalcoatl', 'marzipanesque', 'xylophonist', 'zanzibarian', 'obfuscatrix', 'pumpernickelish'];

/** Text of `kb` KiB, unique to `seed`, with marker word `word` in every line. */
function textOf(word: string, seed: number, kb: number): string {
  let x = seed * 2654435761;
  const lines: string[] = [];
  let size = 0;
  while (size < kb * 1024) {
    x = (x * 1103515245 + 12345) >>> 0;
    const line = `${word} line ${x.toString(36)} of the ${word} notes, ${(x >>> 3).toString(16)}\n`;
    lines.push(line);
    size += line.length;
  }
  return lines.join('');
}

interface Corpus {
  texts: { path: string; tag: string; bytes: Uint8Array }[];
  /** What must never appear at rest: words, paths, tags, digests (hex and raw), chunk keys (hex and raw, plain and keyed). */
  needles: { what: string; bytes: Uint8Array }[];
}

/** Everything a store shows of itself, as one string: entries, versions, tags, metadata, snapshots. */
async function dumpOf(store: Store): Promise<string> {
  const items = (await store.list({ limit: 1000 })).items;
  const versions = await Promise.all(items.filter((i) => i.path).map(async (i) => [i.path, (await store.versions(i.path!)).map((v) => [v.version, v.digest])]));
  const snapshots = (await store.snapshots()).map((s) => [s.id, s.tree, s.label]);
  return JSON.stringify({ items, versions, snapshots });
}

function corpus(): Corpus {
  // The first text has a megabyte of incompressible lines too: packs of their own, not carried in commits.
  const random = (n: number) => randomBytes(n).toString('base64').replace(/(.{76})/g, '$1\n');
  const texts = WORDS.map((w, i) => ({ path: `private/${w}-plans.md`, tag: `tag-${w}`, bytes: utf8(textOf(w, i + 1, 40) + (i === 0 ? random(1 << 20) : '')) }));
  const needles: Corpus['needles'] = [];
  for (const t of texts) {
    const word = t.path.slice(8, t.path.indexOf('-plans'));
    needles.push({ what: `word ${word}`, bytes: utf8(word) }, { what: `path ${t.path}`, bytes: utf8(t.path) }, { what: `tag ${t.tag}`, bytes: utf8(t.tag) });
    const digest = createHash('sha256').update(t.bytes).digest();
    needles.push({ what: `digest of ${t.path}`, bytes: utf8(digest.toString('hex')) }, { what: `raw digest of ${t.path}`, bytes: digest });
    // Plain BLAKE3 chunk keys at every chunking seed's boundaries cannot be listed (the seed is
    // secret); those of the public default seed stand for "keys someone could compute".
    const ing = new Ingester({ compression: false });
    for (const c of [...ing.update(t.bytes), ...ing.finish()]) {
      needles.push({ what: `chunk key of ${t.path}`, bytes: utf8(c.key) }, { what: `raw chunk key of ${t.path}`, bytes: Buffer.from(c.key, 'hex') });
    }
    needles.push({ what: `plain BLAKE3 of all of ${t.path}`, bytes: utf8(blake3(t.bytes)) });
  }
  return { texts, needles };
}

/** Fills a store with the corpus: puts, tags, metadata, a second version, a snapshot, a checkpoint, a deletion and GC. */
async function fill(store: Store, c: Corpus, snapDir: string): Promise<void> {
  for (const t of c.texts) await store.put(t.bytes, { path: t.path, tags: [t.tag], meta: { owner: t.tag } });
  await store.put(utf8(`${WORDS[1]} second version\n`), { path: c.texts[1]!.path });
  mkdirSync(snapDir, { recursive: true });
  writeFileSync(join(snapDir, `${WORDS[2]}-file.txt`), textOf(WORDS[2], 99, 8));
  await store.snapshot(snapDir);
  await store.checkpoint();
  await store.deletePath(c.texts[3]!.path);
  await store.gc();
  await store.search(WORDS[0]!); // (the index is derived state, in the cache)
}

function filesUnder(root: string): string[] {
  return readdirSync(root).flatMap((f) => {
    const p = join(root, f);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

const ZSTD_MAGIC = Buffer.from([0x28, 0xb5, 0x2f, 0xfd]);

/** What of `needles` shows in `bytes` (named), and how many zstd frame magics it holds. */
function leaks(name: string, bytes: Uint8Array, needles: Corpus['needles']): { found: string[]; zstd: number } {
  const b = Buffer.from(bytes);
  const found = needles.filter((n) => b.includes(Buffer.from(n.bytes))).map((n) => `${n.what} in ${name}`);
  let zstd = 0;
  for (let at = b.indexOf(ZSTD_MAGIC); at >= 0; at = b.indexOf(ZSTD_MAGIC, at + 1)) zstd++;
  return { found, zstd };
}

describe('an encrypted store directory', () => {
  const c = corpus();

  it('holds nothing readable: no word, path, tag, digest or chunk key in any file, and no zstd frame', async () => {
    const root = join(tmp(), 'store');
    const cache = join(tmp('kura-enc-cache-'), 'made-by-the-store'); // (mkdtemp's are 700 already)
    const store = await Store.init(root, { encryption: { kdf: FAST }, password: PASSWORD, cacheDir: cache });
    const plainRoot = join(tmp(), 'plain');
    const plain = await Store.init(plainRoot);
    try {
      await fill(store, c, join(tmp(), 'snap'));
      await fill(plain, c, join(tmp(), 'snap'));
    } finally {
      await store.close();
      await plain.close();
    }
    const files = filesUnder(root);
    expect(files.some((f) => f.includes('/keys/'))).toBe(true);
    expect(files.some((f) => f.includes('/packs/'))).toBe(true); // (large enough to be packs of their own)
    expect(files.some((f) => f.includes('/checkpoints/'))).toBe(true);
    expect(files.some((f) => f.endsWith('kura.db'))).toBe(false); // the database is in the cache
    // Its files and folders are its owner's alone, as restic's: a key file lets whoever reads it
    // try passwords offline (they were 644, the folders 755).
    for (const f of files) expect(statSync(f).mode & 0o777, relative(root, f)).toBe(0o600);
    for (const d of [root, join(root, 'keys'), join(root, 'packs')]) expect(statSync(d).mode & 0o777, d).toBe(0o700);
    // ... which its owner alone may enter (it was 755: every account read the plain database).
    expect(statSync(cache).mode & 0o777).toBe(0o700);
    let zstd = 0;
    const found: string[] = [];
    for (const f of files) {
      const l = leaks(relative(root, f), readFileSync(f), c.needles);
      found.push(...l.found);
      zstd += l.zstd;
    }
    expect(found).toEqual([]);
    // A frame magic can occur by chance in ciphertext (2^-32 a position: ~0.001 in these bytes).
    expect(zstd).toBeLessThanOrEqual(1);
    // The same corpus in a plain store shows all of them: the check can find what it looks for.
    const plainFound = new Set(filesUnder(plainRoot).flatMap((f) => leaks(f, readFileSync(f), c.needles).found.map((s) => s.split(' in ')[0])));
    for (const w of WORDS) expect(plainFound.has(`word ${w}`)).toBe(true);
    expect(plainFound.has(`path ${c.texts[0]!.path}`)).toBe(true);
    expect(plainFound.has(`tag ${c.texts[0]!.tag}`)).toBe(true);
    expect([...plainFound].some((s) => s.startsWith('chunk key of'))).toBe(true);
  }, 120_000);

  it('a damaged checkpoint is damage to verify (unauthentic), and a fresh cache is made from the log without it', async () => {
    const root = tmp('kura-enc-');
    const store = await Store.init(root, { encryption: { kdf: FAST }, password: PASSWORD, cacheDir: tmp('kura-enc-cache-') });
    await store.put(new TextEncoder().encode('before the checkpoint'), { path: 'a.txt' });
    const { seq } = await store.checkpoint();
    await store.put(new TextEncoder().encode('after it'), { path: 'b.txt' });
    const file = join(root, 'checkpoints', String(seq).padStart(20, '0'));
    const bytes = readFileSync(file);
    bytes[bytes.length >> 1]! ^= 0x01;
    writeFileSync(file, bytes);
    const v = await store.verify();
    expect(v.ok).toBe(false);
    expect(v.damagedLog).toEqual([expect.objectContaining({ reason: 'unauthentic', seq })]);
    await store.close();
    const fresh = await Store.open(root, { password: PASSWORD, cacheDir: tmp('kura-enc-cache-') });
    try {
      expect((await fresh.list()).items.map((e) => e.path).sort()).toEqual(['a.txt', 'b.txt']);
    } finally {
      await fresh.close();
    }
  });

  it("a damaged key file is named: its password's open says so, and verify reports it as damage", async () => {
    const root = tmp('kura-enc-');
    const cacheDir = tmp('kura-enc-cache-');
    await (await Store.init(root, { encryption: { kdf: FAST }, password: PASSWORD, cacheDir })).close();
    const { ring, close } = await openKeyRing(root);
    const [first] = (await ring.list()).keys;
    const unlocked = await ring.unlock(new TextEncoder().encode(PASSWORD));
    await ring.add(unlocked.master, new TextEncoder().encode('second password'), FAST);
    await close();
    writeFileSync(join(root, 'keys', first!.id), '{"kdf":"argon2id","vers'); // cut short
    // The right password, whose key file is the damaged one: not only "wrong password" (a trial).
    await expect(Store.open(root, { password: PASSWORD, cacheDir: tmp('kura-enc-cache-') })).rejects.toMatchObject({
      code: 'WRONG_PASSWORD',
      message: expect.stringMatching(new RegExp(`keys/${first!.id} is damaged: if the password is that key's, restore it`)),
    });
    const store = await Store.open(root, { password: 'second password', cacheDir });
    try {
      const r = await store.verify();
      expect(r.ok).toBe(false); // (it was ok)
      expect(r.damagedKeys).toEqual([{ id: first!.id, message: expect.any(String) }]);
    } finally {
      await store.close();
    }
  });

  it('opens with its password from a new cache, rebuilt from the sealed objects alone; a wrong password changes nothing', async () => {
    const root = join(tmp(), 'store');
    const store = await Store.init(root, { encryption: { kdf: FAST }, password: PASSWORD, cacheDir: tmp('kura-enc-cache-') });
    let before: string;
    try {
      await fill(store, c, join(tmp(), 'snap'));
      before = await dumpOf(store);
    } finally {
      await store.close();
    }
    const snapshot = (d: string) => filesUnder(d).map((f) => `${relative(d, f)} ${createHash('sha256').update(readFileSync(f)).digest('hex')}`).sort();
    const atRest = snapshot(root);
    for (const password of ['wrong password', undefined]) {
      const cache = tmp('kura-enc-cache-');
      await expect(Store.open(root, { ...(password ? { password } : {}), cacheDir: cache })).rejects.toMatchObject({ code: 'WRONG_PASSWORD', reason: password ? 'wrong' : 'missing' });
      expect(snapshot(root)).toEqual(atRest);
    }
    const again = await Store.open(root, { password: PASSWORD, cacheDir: tmp('kura-enc-cache-') });
    try {
      expect(await dumpOf(again)).toBe(before);
      const hit = (await again.search(WORDS[0]!))[0];
      expect(hit?.path).toBe(c.texts[0]!.path);
      expect(Buffer.from(await again.getBytes(hit!.digest)).equals(Buffer.from(c.texts[0]!.bytes))).toBe(true);
      const report = await again.verify(undefined, { readData: true });
      expect(report.ok).toBe(true);
      expect(report.packsChecked).toBeGreaterThan(0);
    } finally {
      await again.close();
    }
  }, 120_000);
});

/** A filled encrypted store directory, copied fresh for each tampering. */
describe('tampering with an encrypted store', () => {
  const c = corpus();
  let pristine: string;
  beforeAll(async () => {
    pristine = join(tmp(), 'store');
    const cacheDir = tmp('kura-enc-cache-');
    await (await Store.init(pristine, { encryption: { kdf: FAST }, password: PASSWORD, cacheDir })).close();
    // (Small packs: several of them, to swap.)
    const store = await Store.open(pristine, { password: PASSWORD, cacheDir, packSize: 256 * 1024 });
    try {
      await fill(store, c, join(tmp(), 'snap'));
    } finally {
      await store.close();
    }
  }, 120_000);

  const copy = () => {
    const d = join(tmp(), 'copy');
    cpSync(pristine, d, { recursive: true });
    return d;
  };
  const open = (root: string) => Store.open(root, { password: PASSWORD, cacheDir: tmp('kura-enc-cache-') });
  const flip = (file: string, at: (len: number) => number) => {
    const b = readFileSync(file);
    b[at(b.length)]! ^= 0x20;
    writeFileSync(file, b);
  };
  /** Opens the store and reads everything: the error met, or undefined when all of it read back as stored. */
  async function readAll(root: string): Promise<{ code?: string; reason?: string } | undefined> {
    let store: Store | undefined;
    try {
      store = await open(root);
      const report = await store.verify(undefined, { readData: true });
      if (!report.ok) {
        const first = report.damagedChunks[0] ?? report.damagedPacks[0] ?? report.damagedDocuments[0] ?? report.damagedLog[0];
        return { code: 'CORRUPT_DATA', reason: (first as { reason?: string } | undefined)?.reason };
      }
      for (const t of c.texts) {
        const hits = await store.list({ limit: 1000 });
        if (!hits.items.some((e) => e.path === t.path)) continue; // (deleted in fill)
        const got = await store.getBytes(hits.items.find((e) => e.path === t.path)!.digest);
        if (t !== c.texts[1] && !Buffer.from(got).equals(Buffer.from(t.bytes))) return { code: 'WRONG BYTES RETURNED' };
      }
      return undefined;
    } catch (e) {
      return { code: (e as { code?: string }).code ?? String(e), reason: (e as { reason?: string }).reason };
    } finally {
      await store?.close().catch(() => undefined);
    }
  }
  const filesIn = (root: string, dir: string) => filesUnder(join(root, dir)).sort();

  it('the untouched copy reads back whole (the baseline of the cases below)', async () => {
    expect(await readAll(copy())).toBeUndefined();
  }, 60_000);

  it('a byte flipped in a pack record, or in a pack index, is damage named unauthentic', async () => {
    for (const where of [(n: number) => Math.floor(n / 2), (n: number) => n - 30]) {
      const root = copy();
      for (const f of filesIn(root, 'packs')) flip(f, where);
      expect(await readAll(root)).toMatchObject({ code: 'CORRUPT_DATA', reason: 'unauthentic' });
    }
  }, 60_000);

  it('a plain verify of a store in a local directory reads its data, as a plain store\'s does: a flipped byte is found without --read-data', async () => {
    const root = copy();
    for (const f of filesIn(root, 'packs')) flip(f, (n) => Math.floor(n / 2));
    const store = await open(root);
    try {
      const report = await store.verify();
      expect(report).toMatchObject({ ok: false, dataRead: true });
      expect(report.damagedChunks.length + report.damagedPacks.length).toBeGreaterThan(0);
    } finally {
      await store.close();
    }
  }, 60_000);

  it('two packs swapped (each under the other\'s name) are damage: records are bound to their pack', async () => {
    const root = copy();
    const [a, b] = filesIn(root, 'packs');
    expect(b).toBeDefined();
    const tmpName = `${a}.swap`;
    renameSync(a!, tmpName);
    renameSync(b!, a!);
    renameSync(tmpName, b!);
    expect(await readAll(root)).toMatchObject({ code: 'CORRUPT_DATA' });
  }, 60_000);

  it("a commit's body changed, with the frame's plain hash made to match, fails authentication", async () => {
    const root = copy();
    const last = filesIn(root, 'log').at(-1)!;
    const b = readFileSync(last);
    const n = b.readUInt32LE(4);
    b[48 + Math.floor(n / 2)]! ^= 1;
    createHash('sha256').update(b.subarray(0, 48 + n)).digest().copy(b, 48 + n);
    writeFileSync(last, b);
    expect(await readAll(root)).toMatchObject({ code: 'CORRUPT_DATA', reason: 'unauthentic' });
  }, 60_000);

  it("a commit's body changed after this machine applied it, its plain hash made to fit, is refused: by this machine's writer (not the commit it applied) and by a new cache (its seal)", async () => {
    const root = join(tmp(), 'store');
    const cacheDir = tmp('kura-enc-cache-');
    const store = await Store.init(root, { encryption: { kdf: FAST }, password: PASSWORD, cacheDir });
    try {
      for (const t of c.texts.slice(1, 3)) await store.put(t.bytes, { path: t.path });
    } finally {
      await store.close();
    }
    const last = filesIn(root, 'log').at(-1)!;
    const b = readFileSync(last);
    const n = b.readUInt32LE(4);
    b[48 + Math.floor(n / 2)]! ^= 1;
    createHash('sha256').update(b.subarray(0, 48 + n)).digest().copy(b, 48 + n);
    writeFileSync(last, b);
    // (It opened, and verify found it; a writer then published on top of the damaged log. Now its
    // writer reads its head commit back first: a trial.)
    await expect(Store.open(root, { password: PASSWORD, cacheDir })).rejects.toMatchObject({ code: 'CORRUPT_DATA', reason: 'unauthentic' });
    await expect(Store.open(root, { password: PASSWORD, cacheDir: tmp('kura-enc-cache-') })).rejects.toMatchObject({ code: 'CORRUPT_DATA', reason: 'unauthentic' });
  }, 60_000);

  it('a commit replayed in the place of the next one (seq and chain made to fit) fails authentication', async () => {
    const root = copy();
    const log = filesIn(root, 'log');
    const [first, second] = [log.at(-2)!, log.at(-1)!];
    const a = readFileSync(first);
    const b = readFileSync(second);
    const n = a.readUInt32LE(4);
    const replay = Buffer.from(a.subarray(0, 48 + n + 32));
    replay.writeBigUInt64LE(b.readBigUInt64LE(8), 8); // the next seq
    b.subarray(16, 48).copy(replay, 16); // the previous commit's hash, as the real one says
    createHash('sha256').update(replay.subarray(0, 48 + n)).digest().copy(replay, 48 + n);
    writeFileSync(second, replay);
    expect(await readAll(root)).toMatchObject({ code: 'CORRUPT_DATA', reason: 'unauthentic' });
  }, 60_000);

  it('two commits swapped are damage (the chain breaks)', async () => {
    const root = copy();
    const log = filesIn(root, 'log');
    const [a, b] = [log[0]!, log[1]!];
    const x = readFileSync(a);
    writeFileSync(a, readFileSync(b));
    writeFileSync(b, x);
    expect(await readAll(root)).toMatchObject({ code: 'CORRUPT_DATA' });
  }, 60_000);

  it("a commit copied as it is under the next seq's name or over another, or a frame forged without the key, is damage: a writer is refused, never left retrying", async () => {
    // (Passed over as "applied already", none was authenticated: verify said ok, and every writer
    // lost the race for that seq to it forever — a trial.)
    const named = (seq: number) => String(seq).padStart(20, '0');
    const forged = (seq: number) => {
      const body = randomBytes(8);
      const head = Buffer.alloc(48);
      head.write('KLE1', 0, 'latin1');
      head.writeUInt32LE(body.length, 4);
      head.writeBigUInt64LE(BigInt(seq), 8); // (prev: zeros)
      const framed = Buffer.concat([head, body]);
      return Buffer.concat([framed, createHash('sha256').update(framed).digest()]);
    };
    const tamperings: [string, (root: string, last: number) => void][] = [
      ['commit 2 as the next seq', (root, last) => cpSync(join(root, 'log', named(2)), join(root, 'log', named(last + 1)))],
      ['commit 1 over the last', (root, last) => cpSync(join(root, 'log', named(1)), join(root, 'log', named(last)))],
      ['a forged commit 1 as the next seq', (root, last) => writeFileSync(join(root, 'log', named(last + 1)), forged(1))],
    ];
    for (const [what, tamper] of tamperings) {
      // A new cache (another machine), and the cache of the writer that made the last commit.
      const root = copy();
      const cacheDir = tmp('kura-enc-cache-');
      await (await Store.open(root, { password: PASSWORD, cacheDir })).close();
      const last = Number(filesIn(root, 'log').at(-1)!.split('/').at(-1));
      tamper(root, last);
      expect(await readAll(root), what).toMatchObject({ code: 'CORRUPT_DATA', reason: 'unauthentic' });
      const started = Date.now();
      await expect(Store.open(root, { password: PASSWORD, cacheDir }), what).rejects.toMatchObject({ code: 'CORRUPT_DATA', reason: 'unauthentic' });
      expect(Date.now() - started, what).toBeLessThan(20_000); // (bounded: a few catch-ups, not forever)
    }
  }, 120_000);

  it("a writer's cache past the log (its head's commit deleted, or the storage rolled back) is refused, not written on", async () => {
    const root = copy();
    const cacheDir = tmp('kura-enc-cache-');
    await (await Store.open(root, { password: PASSWORD, cacheDir })).close();
    const log = filesIn(root, 'log');
    rmSync(log.at(-1)!);
    await expect(Store.open(root, { password: PASSWORD, cacheDir })).rejects.toMatchObject({ code: 'CORRUPT_DATA', reason: 'log-behind' });
    expect(filesIn(root, 'log')).toEqual(log.slice(0, -1)); // nothing published on top
  }, 60_000);

  it('a checkpoint with a byte flipped, or cut, fails authentication when a new cache loads it', async () => {
    for (const change of ['flip', 'cut'] as const) {
      const root = copy();
      const [cp] = filesIn(root, 'checkpoints');
      if (change === 'flip') flip(cp!, (n) => n - 5);
      else writeFileSync(cp!, readFileSync(cp!).subarray(0, -1));
      expect(await readAll(root)).toMatchObject({ code: 'CORRUPT_DATA', reason: change === 'flip' ? 'unauthentic' : 'checkpoint' });
    }
  }, 60_000);

  it("the configuration's sealed settings changed fail authentication; its key file changed opens with no password", async () => {
    const root = copy();
    const config = join(root, 'kura-store.json');
    const j = JSON.parse(readFileSync(config, 'utf8'));
    j.sealed = j.sealed.slice(0, 100) + (j.sealed[100] === '0' ? '1' : '0') + j.sealed.slice(101);
    writeFileSync(config, JSON.stringify(j));
    expect(await readAll(root)).toMatchObject({ code: 'CORRUPT_DATA', reason: 'unauthentic' });
    const other = copy();
    const [key] = filesIn(other, 'keys');
    const k = JSON.parse(readFileSync(key!, 'utf8'));
    k.key = (k.key[0] === '0' ? '1' : '0') + k.key.slice(1);
    writeFileSync(key!, JSON.stringify(k));
    expect(await readAll(other)).toMatchObject({ code: 'WRONG_PASSWORD' });
  }, 60_000);

  it('swapped for a plain store of its own by whoever can write the storage: refused, and nothing written to it in the clear', async () => {
    const root = copy();
    const cacheDir = tmp('kura-enc-cache-');
    await (await Store.open(root, { password: PASSWORD, cacheDir })).close();
    // The attacker's plain store in its place: a document the victim would read as theirs.
    rmSync(root, { recursive: true });
    const planted = await Store.init(root);
    await planted.put(utf8('planted text'), { path: 'planted.txt' });
    await planted.close();
    const atRest = filesUnder(root).map((f) => `${relative(root, f)} ${statSync(f).size} ${statSync(f).mtimeMs}`).sort();
    // A password configured: the store must be encrypted (so the CLI and the server open it).
    await expect(Store.open(root, { password: PASSWORD, requireEncryption: true, cacheDir: tmp('kura-enc-cache-') })).rejects.toMatchObject({ code: 'FORMAT_MISMATCH', expected: 'encrypted', found: 'plain' });
    // No password configured, but this machine's cache knew the store encrypted: refused too.
    await expect(Store.open(root, { cacheDir })).rejects.toMatchObject({ code: 'FORMAT_MISMATCH', expected: 'encrypted', found: 'plain' });
    await expect(Store.open(root, { password: PASSWORD, cacheDir })).rejects.toMatchObject({ code: 'FORMAT_MISMATCH' });
    expect(filesUnder(root).map((f) => `${relative(root, f)} ${statSync(f).size} ${statSync(f).mtimeMs}`).sort()).toEqual(atRest);
    // A plain store where none was expected opens as before, password or not.
    const plain = await Store.open(root, { password: PASSWORD, cacheDir: tmp('kura-enc-cache-') });
    expect((await plain.list()).items.map((e) => e.path)).toEqual(['planted.txt']);
    await plain.close();
  }, 60_000);

  it('on object storage too: a bucket whose encrypted store was swapped for a plain one is refused', async () => {
    const bucket = new MemoryObjectStore();
    const cacheDir = tmp('kura-enc-cache-');
    const enc = await Store.initObjects(bucket, { cacheDir, encryption: { kdf: FAST }, password: PASSWORD });
    await enc.put(utf8('the secret'), { path: 'secret.txt' });
    await enc.close();
    const keys = async () => {
      const out: string[] = [];
      for await (const o of listAll(bucket, '')) out.push(`${o.key} ${o.etag}`);
      return out.sort();
    };
    for (const k of await keys()) await bucket.delete(k.split(' ')[0]!);
    const planted = await Store.initObjects(bucket, { cacheDir: tmp('kura-enc-cache-') });
    await planted.put(utf8('planted text'), { path: 'planted.txt' });
    await planted.close();
    const objects = await keys();
    await expect(Store.openObjects(bucket, { cacheDir: tmp('kura-enc-cache-'), password: PASSWORD, requireEncryption: true })).rejects.toMatchObject({ code: 'FORMAT_MISMATCH', expected: 'encrypted', found: 'plain' });
    await expect(Store.openObjects(bucket, { cacheDir })).rejects.toMatchObject({ code: 'FORMAT_MISMATCH', expected: 'encrypted', found: 'plain' });
    expect(await keys()).toEqual(objects);
  }, 60_000);
});

describe('an encrypted store on versitygw', () => {
  let server: S3Server;
  beforeAll(async () => {
    server = await startS3Server('versitygw');
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('holds no readable object in the bucket, and a second server opens it with the password', async () => {
    const c = corpus();
    const s3 = { endpoint: server.endpoint, credentials: server.credentials };
    const location = `s3://${server.bucket}/enc`;
    const store = await Store.init(location, { encryption: { kdf: FAST }, password: PASSWORD, cacheDir: tmp('kura-enc-cache-'), s3 });
    let before: string;
    try {
      await fill(store, c, join(tmp(), 'snap'));
      before = await dumpOf(store);
    } finally {
      await store.close();
    }
    const bucket = await openObjectLocation(location, { s3 });
    const found: string[] = [];
    let zstd = 0;
    let objects = 0;
    try {
      for await (const o of listAll(bucket, '')) {
        const l = leaks(o.key, await bucket.get(o.key), c.needles);
        found.push(...l.found);
        zstd += l.zstd;
        objects++;
      }
    } finally {
      await bucket.close();
    }
    expect(objects).toBeGreaterThan(5);
    expect(found).toEqual([]);
    expect(zstd).toBeLessThanOrEqual(1);
    await expect(Store.open(location, { password: 'nope', cacheDir: tmp('kura-enc-cache-'), s3 })).rejects.toMatchObject({ code: 'WRONG_PASSWORD' });
    const again = await Store.open(location, { password: PASSWORD, cacheDir: tmp('kura-enc-cache-'), s3 });
    try {
      expect(await dumpOf(again)).toBe(before);
      expect((await again.verify(undefined, { readData: true })).ok).toBe(true);
    } finally {
      await again.close();
    }
  }, 180_000);
});

