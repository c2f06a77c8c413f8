/**
 * The store verbs of `kura`, run as real processes against real stores in temp directories.
 */
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, truncateSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Store } from '@kura/store';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../bin/kura.js', import.meta.url));
const ADD_KEYS = ['path', 'entry', 'digest', 'size', 'chunks', 'newChunks', 'newBytes', 'version', 'versionMade'];
const STATS_KEYS = ['entries', 'documents', 'logicalBytes', 'uniqueChunkBytes', 'storedBytes', 'dedupRatio', 'compressionRatio'];
const STATS_EXTRA = ['packBytes', 'chunks', 'packs', 'keptDocuments', 'keptBytes'];
const INFO_KEYS = ['path', 'digest', 'size', 'chunks', 'version', 'mediaType', 'tags', 'meta', 'createdAt', 'updatedAt'];
const UNKNOWN = `sha256:${'0'.repeat(64)}`;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  out: Buffer;
}

/** Runs kura; KURA_STORE comes only from `env`. No output of kura ever holds a stack trace. */
function kura(args: string[], opts: { cwd?: string; env?: Record<string, string>; input?: Uint8Array } = {}): Run {
  const env = { ...process.env, ...opts.env };
  if (!opts.env?.KURA_STORE) delete env.KURA_STORE;
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: opts.cwd, env, input: opts.input, maxBuffer: 256 << 20 });
  const run = { code: r.status, stdout: r.stdout.toString(), stderr: r.stderr.toString(), out: r.stdout };
  expect(run.stderr).not.toMatch(/\n\s+at /);
  expect(run.stdout).not.toMatch(/\n\s+at /);
  return run;
}

/** Exactly one `kura: ...` line on stderr. */
function expectOneLineError(r: Run, code: number, pattern: RegExp) {
  expect(r.code).toBe(code);
  expect(r.stderr).toMatch(/^kura: [^\n]*\n$/);
  expect(r.stderr).toMatch(pattern);
}

const jsonLines = (s: string) =>
  s
    .split('\n')
    .filter((l) => l)
    .map((l) => JSON.parse(l));
const sha256 = (b: Uint8Array) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/** A tree with nested directories, an empty file and binary files. */
function makeTree(root: string): Record<string, Buffer> {
  const files: Record<string, Buffer> = {
    'a.txt': Buffer.from('hello, kura\n'),
    'empty': Buffer.alloc(0),
    'notes.md': Buffer.from('# notes\n\nsome markdown\n'),
    'sub/data.bin': randomBytes(300_000),
    'sub/deeper/config.json': Buffer.from('{"x":1}\n'),
    'sub/deeper/picture.png': Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), randomBytes(5000)]),
  };
  for (const [rel, bytes] of Object.entries(files)) {
    mkdirSync(join(root, rel, '..'), { recursive: true });
    writeFileSync(join(root, rel), bytes);
  }
  return files;
}

function packFiles(store: string): string[] {
  const dir = join(store, 'packs');
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.pack'))
    .map((f) => join(dir, f));
}

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'kura-store-cli-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('a store made with init and add', () => {
  let work: string;
  let store: string;
  let files: Record<string, Buffer>;
  let added: any[];
  const s = () => ['--store', store];

  beforeAll(() => {
    work = join(tmp, 'main');
    store = join(work, 'store');
    mkdirSync(work);
    files = makeTree(join(work, 'tree'));
    const init = kura(['init', ...s()]);
    expect(init.code).toBe(0);
    expect(init.stdout).toMatch(/^created a Kura store in .*store/);
    const r = kura(['add', '--json', '--tag', 'first', '--meta', 'batch=1', 'tree', ...s()], { cwd: work });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    added = jsonLines(r.stdout);
  });

  it('add --json prints one line per file, in sorted order, with exactly the documented keys', () => {
    const sorted = Object.keys(files).sort();
    expect(added.map((l) => l.path)).toEqual(sorted.map((rel) => `tree/${rel}`));
    for (const line of added) {
      expect(Object.keys(line)).toEqual(ADD_KEYS);
      const bytes = files[line.path.slice('tree/'.length)]!;
      expect(line.digest).toBe(sha256(bytes));
      expect(line.size).toBe(bytes.length);
      expect(line.chunks).toBe(bytes.length === 0 ? 0 : line.chunks);
      expect(line.chunks).toBeGreaterThanOrEqual(bytes.length ? 1 : 0);
      if (bytes.length) expect(line.newBytes).toBeGreaterThan(0);
      else expect(line).toMatchObject({ chunks: 0, newChunks: 0, newBytes: 0 });
      expect(line).toMatchObject({ version: 1, versionMade: true });
    }
    expect(added.find((l) => l.path === 'tree/sub/data.bin').chunks).toBeGreaterThan(1);
  });

  it('stores each file under its path as given (kura add tree: tree/...), with a guessed media type', () => {
    const docs = jsonLines(kura(['ls', '--json', ...s()]).stdout);
    expect(docs.map((d) => d.path)).toEqual(Object.keys(files).sort().map((rel) => `tree/${rel}`));
    for (const d of docs) expect(Object.keys(d)).toEqual(INFO_KEYS);
    const byPath = Object.fromEntries(docs.map((d) => [d.path, d]));
    expect(byPath['tree/a.txt']).toMatchObject({ mediaType: 'text/plain', tags: ['first'], meta: { batch: '1' }, version: 1 });
    expect(byPath['tree/notes.md'].mediaType).toBe('text/markdown');
    expect(byPath['tree/sub/deeper/config.json'].mediaType).toBe('application/json');
    expect(byPath['tree/sub/deeper/picture.png'].mediaType).toBe('image/png');
    expect(byPath['tree/empty'].mediaType).toBeNull();
  });

  it('the same files added as given, under --as, and with a .. that climbs out', () => {
    const other = mkdtempSync(join(tmpdir(), 'kura-as-'));
    try {
      const st = ['--store', join(other, 'store')];
      kura(['init', ...st]);
      const add = (args: string[]) => jsonLines(kura(['add', '--json', ...args, ...st], { cwd: work }).stdout).map((l) => l.entry);
      expect(add(['./tree/sub/../a.txt', 'tree/sub/deeper'])).toEqual(['tree/a.txt', 'tree/sub/deeper/config.json', 'tree/sub/deeper/picture.png']);
      expect(add(['--as', 'elsewhere', 'tree/a.txt', 'tree/sub/deeper'])).toEqual(['elsewhere/a.txt', 'elsewhere/config.json', 'elsewhere/picture.png']);
      expect(add(['--as', '.', 'tree/notes.md'])).toEqual(['notes.md']);
      const up = kura(['add', '../tree/a.txt', ...st], { cwd: join(work, 'tree') });
      expect(up.code).toBe(2);
      expect(up.stderr).toMatch(/climbs above its start/);
      // What that message advises works: --as (or --path) replaces the name that climbs.
      const fromBelow = (args: string[]) => jsonLines(kura(['add', '--json', ...args, ...st], { cwd: join(work, 'tree', 'sub') }).stdout).map((l) => l.entry);
      expect(fromBelow(['../a.txt', '--as', 'up'])).toEqual(['up/a.txt']);
      expect(fromBelow(['../../tree/notes.md', '--path', 'up/notes.md'])).toEqual(['up/notes.md']);
      expect(fromBelow(['../sub/deeper', '--as', 'updir'])).toEqual(['updir/config.json', 'updir/picture.png']);
      // An option's value that climbs names the option to fix (`--as ../x` was told to give --as: a trial).
      const asUp = kura(['add', '--as', '../x', 'tree/a.txt', ...st], { cwd: work });
      expect(asUp.code).toBe(2);
      expect(asUp.stderr).toBe('kura: --as ../x: a path in the store cannot climb above its root (..): give --as a path inside it, such as "x" [INVALID_INPUT]\n');
      // Every error is one line ending in its code: commander's own (three lines before: a
      // trial), and a message quoting broken text with its line ends.
      const typo = kura(['ls', '--limt', '3', ...st], { cwd: work });
      expect([typo.code, typo.stderr]).toEqual([2, "kura: unknown option '--limt' (did you mean --limit?; kura --help for usage) [INVALID_INPUT]\n"]);
      expect(kura(['ls', '--limit', '0', ...st], { cwd: work }).stderr).toBe('kura: --limit must be between 1 and 10000, got 0 [INVALID_INPUT]\n');
      const broken = join(work, 'broken-store');
      kura(['init', '--store', broken]);
      writeFileSync(join(broken, 'kura-store.json'), 'garbage\n');
      const parsed = kura(['ls', '--store', broken], { cwd: work });
      expect(parsed.code).toBe(1);
      expect(parsed.stderr).toMatch(/^kura: the store's configuration \(kura-store\.json\) is not JSON: [^\n]*\[CORRUPT_DATA\]\n$/);
      // Standard input: read once, and named by --path only (--as has no name to put under).
      for (const args of [['-', '-'], ['--as', 'inbox', '-']]) {
        const r = kura(['add', ...args, ...st], { cwd: work, input: new TextEncoder().encode('from stdin') });
        expect([args.join(' '), r.code]).toEqual([args.join(' '), 2]);
      }
      // Paths, documents: a.txt, notes.md and the tree's files, each stored once.
      const stats = JSON.parse(kura(['stats', '--json', ...st]).stdout);
      expect(stats).toMatchObject({ entries: 11, documents: 4 });
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('re-adding the same tree stores nothing new', () => {
    const r = kura(['add', '--json', 'tree', ...s()], { cwd: work });
    expect(r.code).toBe(0);
    const again = jsonLines(r.stdout);
    expect(again.map((l) => l.digest)).toEqual(added.map((l) => l.digest));
    for (const line of again) expect(line).toMatchObject({ newChunks: 0, newBytes: 0, version: 1, versionMade: false });
  });

  it('prints a human line per file and a summary without --json', () => {
    // (The same path again: no new entry or version; the store lists the tree's files only.)
    const r = kura(['add', join('tree', 'a.txt'), ...s()], { cwd: work });
    expect(r.code).toBe(0);
    const [line, summary] = r.stdout.split('\n');
    expect(line).toBe(`${sha256(files['a.txt']!)}  ${join('tree', 'a.txt')}  12 B (0 B new)`);
    expect(summary).toMatch(/^added 1 file: 12 B, 0 B newly stored/);
  });

  it('get and cat return the original bytes; get -o writes a file', () => {
    for (const line of added) {
      const original = files[line.path.slice('tree/'.length)]!;
      const got = kura(['get', line.digest, ...s()]);
      expect(got.code).toBe(0);
      expect(got.out.equals(original)).toBe(true);
      const catted = kura(['cat', line.digest, ...s()]);
      expect(catted.out.equals(original)).toBe(true);
    }
    const bin = added.find((l) => l.path === 'tree/sub/data.bin');
    const out = join(work, 'out.bin');
    const r = kura(['get', bin.digest, '-o', out, ...s()]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(readFileSync(out).equals(files['sub/data.bin']!)).toBe(true);
    expect(readdirSync(work).filter((f) => f.includes('.tmp-'))).toEqual([]);
    // A directory is no file to write: said as such, nothing made in it (it said "not a directory").
    for (const dir of [`${work}/tree/`, join(work, 'tree')]) {
      const toDir = kura(['get', bin.digest, '-o', dir, ...s()]);
      expect([toDir.code, toDir.stderr]).toEqual([1, expect.stringMatching(/is a directory: -o takes the file to write .* \[EISDIR\]\n$/)]);
    }
    expect(readdirSync(join(work, 'tree')).filter((f) => f.includes('.tmp-'))).toEqual([]);
    // cat concatenates; digests may be given without the prefix and in upper case.
    const two = kura(['cat', added[0].digest, added[0].digest.slice(7).toUpperCase(), ...s()]);
    expect(two.out.equals(Buffer.concat([files['a.txt']!, files['a.txt']!]))).toBe(true);
  });

  it("get -o leaves a document's runs of zeros as holes: the same bytes, less disk (decision 0074)", () => {
    const store = join(tmp, 'sparse');
    expect(kura(['init', '--store', store]).code).toBe(0);
    const image = Buffer.concat([randomBytes(300_000), Buffer.alloc(6 << 20), randomBytes(300_000)]);
    writeFileSync(join(tmp, 'disk.img'), image);
    const img = jsonLines(kura(['add', '--json', 'disk.img', '--store', store], { cwd: tmp }).stdout)[0];
    const imageOut = join(tmp, 'disk-back.img');
    expect(kura(['get', img.digest, '-o', imageOut, '--store', store]).code).toBe(0);
    expect(readFileSync(imageOut).equals(image)).toBe(true);
    writeFileSync(join(tmp, 'probe'), '');
    truncateSync(join(tmp, 'probe'), 1 << 20);
    if (statSync(join(tmp, 'probe')).blocks === 0) expect(statSync(imageOut).blocks * 512).toBeLessThan(2 << 20); // (a file system with holes: ext4 here)
  });

  it('ls filters by tag, media type and path prefix', () => {
    const paths = (args: string[]) => jsonLines(kura(['ls', '--json', ...args, ...s()]).stdout).map((d) => d.path);
    expect(paths(['--type', 'image/png'])).toEqual(['tree/sub/deeper/picture.png']);
    expect(paths(['--prefix', 'tree/sub/'])).toEqual(['tree/sub/data.bin', 'tree/sub/deeper/config.json', 'tree/sub/deeper/picture.png']);
    expect(paths(['--prefix', 'tree/sub/deeper/', '--type', 'application/json'])).toEqual(['tree/sub/deeper/config.json']);
    expect(paths(['--tag', 'first'])).toHaveLength(Object.keys(files).length);
    expect(paths(['--tag', 'nope'])).toEqual([]);
    expect(paths(['--since', '2000-01-01', '--until', '2999-01-01T00:00:00Z'])).toHaveLength(Object.keys(files).length);
    expect(paths(['--since', '2999-01-01'])).toEqual([]);
    const human = kura(['ls', '--prefix', 'tree/a.', ...s()]);
    expect(human.stdout).toBe(`${sha256(files['a.txt']!)}        12 B  tree/a.txt  [first]\n`);
  });

  it('ls --limit/--cursor pages through every document exactly once', () => {
    const all = jsonLines(kura(['ls', '--json', ...s()]).stdout).map((d) => d.digest);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    for (;;) {
      const r = kura(['ls', '--json', '--limit', '2', ...(cursor ? ['--cursor', cursor] : []), ...s()]);
      expect(r.code).toBe(0);
      const page = jsonLines(r.stdout);
      expect(page.length).toBeLessThanOrEqual(2);
      seen.push(...page.map((d) => d.digest));
      pages++;
      const m = /^kura: next cursor: (\S+)\n$/.exec(r.stderr);
      if (!m) {
        expect(r.stderr).toBe('');
        break;
      }
      cursor = m[1];
    }
    expect(seen).toEqual(all);
    expect(pages).toBe(Math.ceil(all.length / 2));
  });

  it('tag and meta change what ls --json shows', () => {
    const d = added.find((l) => l.path === 'tree/notes.md').digest;
    const t = kura(['tag', d, '--add', 'draft', '--add', 'review', '--remove', 'first', ...s()]);
    expect(t.code).toBe(0);
    expect(t.stdout).toBe('');
    expect(kura(['tag', d, ...s()]).stdout).toBe('draft\nreview\n');
    const m = kura(['meta', d, 'author=ada', 'note=a=b', 'batch=', '--json', ...s()]);
    expect(m.code).toBe(0);
    expect(JSON.parse(m.stdout)).toMatchObject({ digest: d, tags: ['draft', 'review'], meta: { author: 'ada', note: 'a=b' } });
    expect(kura(['meta', d, ...s()]).stdout).toBe('author=ada\nnote=a=b\n');
    const listed = jsonLines(kura(['ls', '--json', '--tag', 'review', ...s()]).stdout);
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ digest: d, path: 'tree/notes.md', tags: ['draft', 'review'], meta: { author: 'ada', note: 'a=b' } });
    const tj = JSON.parse(kura(['tag', d, '-r', 'draft', '--json', ...s()]).stdout);
    expect(tj.tags).toEqual(['review']);
  });

  it('stats --json has the documented keys, and dedupRatio grows with modified copies', () => {
    const before = JSON.parse(kura(['stats', '--json', ...s()]).stdout);
    expect(Object.keys(before)).toEqual([...STATS_KEYS, ...STATS_EXTRA]);
    expect(before.documents).toBe(Object.keys(files).length);
    expect(before.entries).toBe(Object.keys(files).length);
    expect(before.dedupRatio).toBe(1);
    // Copies of the tree with a few bytes changed in the middle of the big file.
    for (const i of [1, 2]) {
      const copy = join(work, `copy${i}`);
      cpSync(join(work, 'tree'), copy, { recursive: true });
      const bin = Buffer.from(files['sub/data.bin']!);
      bin[150_000 + i] = bin[150_000 + i]! ^ 0xff;
      writeFileSync(join(copy, 'sub/data.bin'), bin);
      const r = kura(['add', '--json', copy, ...s()]);
      const lines = jsonLines(r.stdout);
      const changed = lines.find((l) => l.path.endsWith('data.bin'));
      expect(changed.newChunks).toBeGreaterThan(0);
      expect(changed.newChunks).toBeLessThan(changed.chunks);
      for (const l of lines.filter((x) => x !== changed)) expect(l.newBytes).toBe(0);
    }
    const after = JSON.parse(kura(['stats', '--json', ...s()]).stdout);
    expect(Object.keys(after)).toEqual([...STATS_KEYS, ...STATS_EXTRA]);
    expect(after.documents).toBe(before.documents + 2);
    expect(after.dedupRatio).toBeGreaterThan(1.5);
    const human = kura(['stats', ...s()]).stdout;
    expect(human).toMatch(/^entries\s+18\ndocuments\s+8\n/); // three trees of 6 files, 8 distinct
    expect(human).toMatch(/dedup ratio\s+\d+\.\d\dx/);
  });

  it('rm removes documents, reports unknown ones with exit 1, and still removes the rest', () => {
    const d = added.find((l) => l.path === 'tree/sub/deeper/config.json').digest;
    const r = kura(['rm', UNKNOWN, d, ...s()]);
    expectOneLineError(r, 1, new RegExp(`^kura: no document ${UNKNOWN} \\[NOT_FOUND\\]\n`));
    expect(r.stdout).toBe('');
    expectOneLineError(kura(['rm', 'no/such/path', ...s()]), 1, /^kura: no path no\/such\/path \[NOT_FOUND\]\n$/);
    // A file-system error names its file (it said "kura: no such file or directory" alone).
    expectOneLineError(kura(['snapshot', join(tmp, 'no-such-dir'), ...s()]), 1, /^kura: .*no-such-dir: no such file or directory \[ENOENT\]\n$/);
    expect(kura(['ls', '--json', ...s()]).stdout).not.toContain(d);
    expectOneLineError(kura(['get', d, ...s()]), 1, /no document sha256:/);
    const again = kura(['rm', '--json', d, ...s()]);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout)).toEqual({ digest: d, removed: false });
  });
});

describe('verify', () => {
  it('exits 0 on a clean store and 3 after a byte of a pack is flipped, naming the damaged document', () => {
    const store = join(tmp, 'verify');
    const s = ['--store', store];
    kura(['init', ...s]);
    const dir = join(tmp, 'verify-in');
    mkdirSync(dir);
    writeFileSync(join(dir, 'one.txt'), 'a small document\n');
    writeFileSync(join(dir, 'two.bin'), randomBytes(200_000));
    // Two calls: with several files, add's workers may append chunks in any order (only
    // commits keep input order), and this test needs two.bin's chunks to end the pack.
    const added = [
      ...jsonLines(kura(['add', '--json', 'one.txt', ...s], { cwd: dir }).stdout),
      ...jsonLines(kura(['add', '--json', 'two.bin', ...s], { cwd: dir }).stdout),
    ];
    const clean = kura(['verify', ...s]);
    expect(clean.code).toBe(0);
    expect(clean.stdout).toMatch(/^ok: \d+ chunks, 2 documents, .* checked; the database's \d+ rows compared with the log\n$/);
    expect(JSON.parse(kura(['verify', '--json', ...s]).stdout)).toMatchObject({ ok: true, documentsChecked: 2, damagedChunks: [] });

    // two.bin was added last: its last chunk ends the pack.
    const packs = packFiles(store);
    expect(packs.length).toBeGreaterThan(0);
    const pack = packs.sort((a, b) => statSync(b).size - statSync(a).size)[0]!;
    const bytes = readFileSync(pack);
    // Before the index its writer appended at the seal (FORMAT.md §6): in two.bin's last chunk.
    const end = bytes.toString('latin1', bytes.length - 4) === 'KEND' ? bytes.length - bytes.readUInt32LE(bytes.length - 8) : bytes.length;
    bytes[end - 10] = bytes[end - 10]! ^ 0x01;
    writeFileSync(pack, bytes);

    const two = added.find((l) => l.path.endsWith('two.bin')).digest;
    const r = kura(['verify', ...s]);
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/^damaged chunk [0-9a-f]{64}: /);
    expect(r.stdout).toContain(`  breaks ${two}  two.bin\n`);
    expect(r.stdout).toMatch(/DAMAGED: 1 chunk and 1 document damaged/);
    expect(r.stdout).not.toContain(added.find((l) => l.path.endsWith('one.txt')).digest);

    const j = kura(['verify', '--json', ...s]);
    expect(j.code).toBe(3);
    const report = JSON.parse(j.stdout);
    expect(report.ok).toBe(false);
    expect(report.damagedChunks[0].documents).toEqual([two]);
    expect(report.damagedDocuments.map((d: any) => d.digest)).toEqual([two]);

    // Damaged data: exit 1, CORRUPT_DATA, and no partial -o file.
    const out = join(tmp, 'damaged.out');
    expectOneLineError(kura(['get', two, '-o', out, ...s]), 1, /CORRUPT_DATA/);
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(tmp).filter((f) => f.includes('.tmp-'))).toEqual([]);
    expectOneLineError(kura(['cat', two, ...s]), 1, new RegExp(`${two}.*CORRUPT_DATA`));

    // The repair verify says: the same bytes put again write the damaged chunk anew (verify
    // opened read-only recorded nothing, and the put only deduplicated: a trial).
    expect(r.stdout).toContain('to repair: put the same bytes again');
    expect(kura(['add', 'two.bin', ...s], { cwd: dir }).code).toBe(0);
    const repaired = kura(['verify', ...s]);
    expect([repaired.code, repaired.stdout]).toEqual([0, expect.stringMatching(/^ok: /)]);
    expect(kura(['get', two, '-o', out, ...s]).code).toBe(0);
    expect(createHash('sha256').update(readFileSync(out)).digest('hex')).toBe(two.slice('sha256:'.length));
  });

  it('exits 3 when kura.db is not what its log makes it, naming table and row; kura rebuild mends it', () => {
    const store = join(tmp, 'verify-db');
    const s = ['--store', store];
    kura(['init', ...s]);
    const dir = join(tmp, 'verify-db-in');
    mkdirSync(dir);
    for (const name of ['a.md', 'b.md', 'c.md']) writeFileSync(join(dir, name), `notes ${name}\n`);
    expect(kura(['add', 'a.md', 'b.md', 'c.md', ...s], { cwd: dir }).code).toBe(0);
    // An entry lost from kura.db behind the store's back (another SQLite connection).
    const db = new Database(join(store, 'kura.db'));
    const { id } = db.prepare("SELECT id FROM entries WHERE path = 'b.md'").get() as { id: number };
    db.prepare('DELETE FROM entries WHERE id = ?').run(id);
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    expect(kura(['ls', ...s]).stdout).not.toContain('b.md'); // (what such damage looks like: a short listing)

    const r = kura(['verify', ...s]);
    expect(r.code).toBe(3);
    expect(r.stdout).toContain(`damaged database: table entries: 1 row the log gives is missing (id ${id}): a rebuild makes the database again from the log (kura rebuild`);
    expect(r.stdout).toMatch(/DAMAGED: 0 chunks, 0 documents and the database damaged/);
    const j = JSON.parse(kura(['verify', '--json', ...s]).stdout);
    expect(j).toMatchObject({ ok: false, catalogChecked: true, damagedCatalog: [{ reason: 'catalog', table: 'entries', missing: 1, extra: 0, differing: 0 }] });

    expect(kura(['rebuild', ...s]).code).toBe(0);
    const mended = kura(['verify', ...s]);
    expect([mended.code, mended.stdout]).toEqual([0, expect.stringMatching(/^ok: .* compared with the log\n$/)]);
    expect(kura(['ls', ...s]).stdout).toContain('b.md');
  });
});

describe('gc', () => {
  it('reports the bytes freed after rm', () => {
    const store = join(tmp, 'gc');
    const s = ['--store', store];
    kura(['init', ...s]);
    const f = join(tmp, 'gc.bin');
    writeFileSync(f, randomBytes(100_000));
    const [line] = jsonLines(kura(['add', '--json', f, ...s]).stdout);
    const nothing = kura(['gc', '--json', ...s]);
    expect(nothing.code).toBe(0);
    expect(JSON.parse(nothing.stdout)).toMatchObject({ chunksRemoved: 0, bytesFreed: 0 });
    expect(kura(['rm', line.digest, ...s]).code).toBe(0);
    const r = kura(['gc', '--json', ...s]);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    // (chunksWaiting and chunkBytesWaiting added on purpose: what waits for the margin, said;
    // documentsRemoved: documents nothing held, which a stopped snapshot left.)
    expect(Object.keys(report).sort()).toEqual(['bytesFreed', 'bytesInLog', 'bytesWaiting', 'checkpointsDeleted', 'chunkBytesWaiting', 'chunksDamaged', 'chunksRemoved', 'chunksWaiting', 'documentsRemoved', 'forgotten', 'logCommitsDeleted', 'orphansDeleted', 'packsCompacted', 'packsDeleted', 'packsWaiting']);
    expect(report.forgotten).toEqual({ snapshots: 0, versions: 0 }); // no policies kept in the store
    expect(report.chunksRemoved).toBe(line.chunks);
    expect(report.bytesFreed).toBeGreaterThanOrEqual(100_000);
    expect(JSON.parse(kura(['stats', '--json', ...s]).stdout)).toMatchObject({ documents: 0, storedBytes: 0 });
    const human = kura(['gc', ...s]);
    expect(human.stdout).toBe('freed 0 B: 0 chunks removed, 0 packs deleted, 0 packs compacted, 0 orphan files deleted\n');
  });
});

describe('rebuild', () => {
  it('makes a damaged kura.db again from the log: the same paths, versions, tags and bytes', () => {
    const store = join(tmp, 'rebuild');
    const s = ['--store', store];
    kura(['init', ...s]);
    const dir = join(tmp, 'rebuild-in');
    mkdirSync(join(dir, 'docs'), { recursive: true });
    writeFileSync(join(dir, 'docs', 'a.txt'), 'first draft\n');
    writeFileSync(join(dir, 'docs', 'b.bin'), randomBytes(150_000));
    expect(kura(['add', 'docs', ...s], { cwd: dir }).code).toBe(0);
    writeFileSync(join(dir, 'docs', 'a.txt'), 'second draft\n');
    expect(kura(['add', 'docs/a.txt', ...s], { cwd: dir }).code).toBe(0);
    expect(kura(['tag', 'docs/a.txt', '--add', 'draft', ...s]).code).toBe(0);
    const ls = kura(['ls', '--json', ...s]).stdout;
    const versions = kura(['versions', 'docs/a.txt', ...s]).stdout;

    writeFileSync(join(store, 'kura.db'), 'this is not a database');
    rmSync(join(store, 'kura.db-wal'), { force: true });
    expectOneLineError(kura(['ls', ...s]), 1, /damaged.*kura rebuild/);

    const r = kura(['rebuild', '--json', ...s]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ checkpoint: null, commits: expect.any(Number), seq: expect.any(Number) });
    expect(kura(['ls', '--json', ...s]).stdout).toBe(ls);
    expect(kura(['versions', 'docs/a.txt', ...s]).stdout).toBe(versions);
    expect(kura(['cat', 'docs/a.txt@1', ...s]).stdout).toBe('first draft\n');
    expect(kura(['verify', ...s]).code).toBe(0);
    expect(kura(['rebuild', ...s]).stdout).toMatch(/^rebuilt .*kura\.db: \d+ commits replayed from the start of the log, up to commit \d+, in [0-9.]+ s\n$/);
  });
});

describe('where the store is', () => {
  let work: string;
  let doc: Buffer;
  beforeAll(() => {
    work = join(tmp, 'where');
    mkdirSync(work);
    doc = Buffer.from('where am I stored?\n');
    writeFileSync(join(work, 'doc.txt'), doc);
  });
  const count = (args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}) => {
    const r = kura(['stats', '--json', ...args], opts);
    expect(r.code).toBe(0);
    return JSON.parse(r.stdout).documents;
  };

  it('--store works before and after the verb', () => {
    const a = join(work, 'a');
    expect(kura(['--store', a, 'init']).code).toBe(0);
    expect(kura(['add', join(work, 'doc.txt'), '--store', a]).code).toBe(0);
    expect(count(['--store', a])).toBe(1);
    expect(kura(['--store', a, 'get', sha256(doc)]).out.equals(doc)).toBe(true);
    expect(kura(['get', sha256(doc), `--store=${a}`]).out.equals(doc)).toBe(true);
  });

  it('KURA_STORE is used when there is no --store, and --store wins over it', () => {
    const b = join(work, 'b');
    const env = { KURA_STORE: b };
    expect(kura(['init'], { env }).code).toBe(0);
    expect(existsSync(join(b, 'kura.db'))).toBe(true);
    expect(count([], { env })).toBe(0);
    kura(['add', join(work, 'doc.txt')], { env });
    expect(count([], { env })).toBe(1);
    expect(count(['--store', join(work, 'a')], { env })).toBe(1);
    const c = join(work, 'c');
    kura(['init', '--store', c], { env });
    expect(count([], { env: { KURA_STORE: c } })).toBe(0);
  });

  it('defaults to ./.kura', () => {
    expect(kura(['init'], { cwd: work }).code).toBe(0);
    expect(existsSync(join(work, '.kura', 'kura.db'))).toBe(true);
    kura(['add', 'doc.txt'], { cwd: work });
    expect(count([], { cwd: work })).toBe(1);
    const ls = jsonLines(kura(['ls', '--json'], { cwd: work }).stdout);
    expect(ls.map((d) => d.path)).toEqual(['doc.txt']);
  });

  it('a missing store is a one-line error naming it', () => {
    expectOneLineError(kura(['ls', '--store', join(work, 'nowhere')]), 1, /no Kura store at .*nowhere.*NOT_FOUND/);
  });
});

describe('errors', () => {
  let store: string;
  let digest: string;
  beforeAll(() => {
    store = join(tmp, 'errors');
    kura(['init', '--store', store, '--avg', '4096', '--seed', 'random', '--compression', 'none', '--durability', 'full']);
    const f = join(tmp, 'errors.txt');
    writeFileSync(f, 'error cases\n');
    digest = jsonLines(kura(['add', '--json', '--durability', 'full', f, '--store', store]).stdout)[0].digest;
  });

  it.each([
    [['ls', '--bogus'], /unknown option '--bogus'/],
    [['get', 'sha256:xyz'], /not a document digest: "sha256:xyz"/],
    [['get', 'sha256:deadbeef'], /not a document digest/],
    [['rm', `sha256:${'0'.repeat(63)}`], /not a document digest/],
    [['ls', '--limit', '0'], /--limit must be between 1 and 10000/],
    [['ls', '--limit', 'ten'], /--limit must be a whole number/],
    [['ls', '--since', 'yesterday'], /--since must be an ISO 8601 date/],
    [['ls', '--cursor', 'a#c'], /--cursor must be a cursor printed by kura ls/],
    [['ls', '--cursor', 'abc'], /cursor is not one this store gave out \[INVALID_INPUT\]/], // well-formed, never given out
    [['meta', UNKNOWN, 'noequals'], /meta takes key=value/],
    [['add', '--meta', 'x', 'somefile'], /--meta takes key=value/],
    [['add', '--durability', 'sometimes', 'somefile'], /--durability must be full or normal/],
    [['tag', UNKNOWN, '--add', 'x', '--remove', 'x'], /--add and --remove both name the tag "x"/],
    [['get'], /missing required argument/],
  ])('%o is a usage error (exit 2)', (args, message) => {
    const r = kura([...(args as string[]), '--store', store]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toMatch(/^kura: /);
  });

  it('add with an invalid --type is a usage error and stores nothing', () => {
    const r = kura(['add', '--type', 'not a type', join(tmp, 'errors.txt'), '--store', store]);
    expectOneLineError(r, 2, /mediaType must look like type\/subtype \(parameters in printable ASCII\) \[INVALID_INPUT\]/);
  });

  it.each([
    [['--avg', '1000'], /--avg must be a power of two, got 1000/],
    [['--avg', '16k'], /--avg must be a whole number/],
    [['--seed', '-1'], /--seed must be/],
    [['--compression', '0'], /--compression must be a zstd level/],
    [['--durability', 'max'], /--durability must be full or normal/],
  ])('init %o is a usage error and leaves no store behind', (args, message) => {
    const dir = join(tmp, `bad-init-${args.join('')}`);
    const r = kura(['init', ...(args as string[]), '--store', dir]);
    expectOneLineError(r, 2, message);
    expect(existsSync(dir)).toBe(false);
  });

  it('init refuses an existing store (exit 1)', () => {
    expectOneLineError(kura(['init', '--store', store]), 1, /already holds a Kura store/);
  });

  it('an unknown digest is exit 1 with "kura: no document sha256:..."', () => {
    for (const verb of ['get', 'cat', 'tag', 'meta']) {
      expectOneLineError(kura([verb, UNKNOWN, '--store', store]), 1, new RegExp(`^kura: no document ${UNKNOWN}`));
    }
    expectOneLineError(kura(['get', UNKNOWN, '-o', join(tmp, 'never'), '--store', store]), 1, /no document/);
    expect(existsSync(join(tmp, 'never'))).toBe(false);
  });

  it('an unreadable path is reported in one line, the rest is still added, exit 1', () => {
    const ok = join(tmp, 'readable.txt');
    writeFileSync(ok, 'readable\n');
    const r = kura(['add', '--json', join(tmp, 'missing.txt'), ok, '--store', store]);
    expectOneLineError(r, 1, /^kura: .*missing\.txt: no such file or directory \[ENOENT\]\n$/);
    expect(jsonLines(r.stdout).map((l) => l.path)).toEqual([ok]);
  });

  // Until the commit log (issue 20) a second writer got STORE_LOCKED; now only rebuild needs
  // the store to itself.
  it('a store open for writing in another process takes writes from kura too; rebuild is exit 1 with STORE_LOCKED', async () => {
    const held = await Store.open(store);
    try {
      const extra = join(tmp, 'while-held.txt');
      writeFileSync(extra, 'written while another process had the store open\n');
      expect(kura(['add', extra, '--store', store]).code).toBe(0);
      expect(kura(['tag', digest, '--add', 'x', '--store', store]).code).toBe(0);
      expect(kura(['gc', '--store', store]).code).toBe(0);
      expect((await held.stat(digest)).tags).toContain('x'); // the other writer sees it at once
      expectOneLineError(kura(['rebuild', '--store', store]), 1, /^kura: .*locked.*\[STORE_LOCKED\]\n$/);
      expect(kura(['get', digest, '--store', store]).stdout).toBe('error cases\n');
    } finally {
      await held.close();
    }
    expect(kura(['rebuild', '--store', store]).code).toBe(0);
    expect(kura(['tag', digest, '--store', store]).stdout).toContain('x');
  });

  it('a damaged database is a one-line error', () => {
    const dir = join(tmp, 'not-a-db');
    mkdirSync(dir);
    writeFileSync(join(dir, 'kura.db'), 'this is not SQLite, just text long enough to look like a header........\n'.repeat(100));
    const r = kura(['stats', '--store', dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^kura: [^\n]*not-a-db[^\n]*\n$/);
  });
});

describe('progress bar', () => {
  const script = spawnSync('script', ['--version']).status === 0;

  it.skipIf(!script)('add and gc show progress on a terminal, and never with --json', () => {
    const dir = join(tmp, 'progress-in');
    mkdirSync(dir);
    writeFileSync(join(dir, 'big.bin'), randomBytes(8 << 20));
    const q = (p: string) => `'${p.replace(/'/g, "'\\''")}'`;
    // script(1) gives kura a terminal for stdout and stderr. Each run has its own store, so
    // neither waits on the other's writer lock however script(1) times its exit.
    const tty = (args: string, store: string) => {
      kura(['init', '--store', store]);
      const cmd = `${q(process.execPath)} ${q(BIN)} ${args} --store ${q(store)}`;
      return spawnSync('script', ['-qec', cmd, '/dev/null'], { encoding: 'utf8' }).stdout;
    };
    const shown = tty(`add ${q(dir)}`, join(tmp, 'progress1'));
    expect(shown).toMatch(/ [KMG]iB\/s \| dedup so far /);
    expect(shown).toMatch(/added 1 file: 8\.00 MiB/);
    // kura gc shows where it is too (chunk rows removed, then packs), and not with --json.
    const small = join(tmp, 'progress3');
    kura(['init', '--avg', '256', '--store', small]);
    expect(kura(['add', join(dir, 'big.bin'), '--store', small]).code).toBe(0);
    expect(kura(['rm', join(dir, 'big.bin'), '--store', small]).code).toBe(0);
    const gcCmd = (json: string) => spawnSync('script', ['-qec', `${q(process.execPath)} ${q(BIN)} gc ${json} --store ${q(small)}`, '/dev/null'], { encoding: 'utf8' }).stdout;
    const gc = gcCmd('');
    expect(gc).toMatch(/removing unused chunks [\d,]+\/[\d,]+|deleting and compacting packs \d+\/\d+/);
    expect(gc).toMatch(/freed [\d.]+ MiB: [\d,]+ chunks removed, 1 pack deleted/);
    expect(gcCmd('--json')).not.toMatch(/removing|compacting/);
    const json = tty(`add --json ${q(dir)}`, join(tmp, 'progress2'));
    expect(json).not.toMatch(/dedup so far/);
    expect(json.replace(/\r/g, '')).toMatch(/^\{"path":"[^"]*big\.bin","entry":"[^"]*big\.bin","digest":"sha256:[0-9a-f]{64}","size":8388608,/);
  });
});
