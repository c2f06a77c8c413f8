import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadMiniLm } from '../../store/src/node/minilm-node.js';
import { makeDocx, makeHtml, makePdf } from '../../store/test/helpers/documents.js';
import { startEmbeddingServer } from '../../store/test/helpers/embedding-server.js';

const BIN = fileURLToPath(new URL('../bin/kura.js', import.meta.url));

function kura(args: string[], cwd?: string) {
  const r = spawnSync(process.execPath, [BIN, ...args], { maxBuffer: 64 << 20, cwd });
  return { code: r.status, stdout: r.stdout.toString(), stderr: r.stderr.toString(), out: r.stdout };
}

const roots: string[] = [];
afterAll(() => roots.splice(0).forEach((r) => rmSync(r, { recursive: true, force: true })));

function setup() {
  const root = mkdtempSync(join(tmpdir(), 'kura-search-cli-'));
  roots.push(root);
  const store = join(root, 'store');
  const tree = join(root, 'tree');
  mkdirSync(join(tree, 'guides'), { recursive: true });
  writeFileSync(join(tree, 'guides', 'harbour.md'), 'How to moor a boat in the harbour. The harbour master decides.\n');
  writeFileSync(join(tree, 'notes.txt'), 'A note that mentions a harbour once.\n');
  writeFileSync(join(tree, 'image.bin'), Buffer.from([0, 1, 2, 104, 97, 114, 98, 111, 117, 114]));
  expect(kura(['init', '--store', store]).code).toBe(0);
  expect(kura(['add', '--store', store, '--tag', 'docs', 'tree'], root).code).toBe(0); // stored as tree/...
  return { root, store, tree };
}

/** Adds each text in turn as the document at `path` (a version each, unless the same bytes). */
function addVersions(store: string, root: string, path: string, texts: string[]): string {
  const file = join(root, path.replaceAll('/', '_'));
  for (const text of texts) {
    writeFileSync(file, text);
    kura(['add', '--store', store, '--path', path, file]);
  }
  return file;
}

describe('kura search', () => {
  it('ranks, highlights and prints JSON hits; filters by tag, type and prefix', () => {
    const { store } = setup();
    const r = kura(['search', '--store', store, 'harbour']);
    expect(r.code).toBe(0);
    const paths = [...r.stdout.matchAll(/^sha256:[0-9a-f]{64} {2}(\S+)$/gm)].map((m) => m[1]);
    expect(paths).toEqual(['tree/guides/harbour.md', 'tree/notes.txt']); // the binary is not text
    expect(r.stdout).toContain('[harbour]');
    // (The keyword mode's shape; the default is hybrid where the model is installed: decision 0036.)
    const json = kura(['search', '--store', store, '--json', '--mode', 'keyword', '--type', 'text/plain', 'harbour']).stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(json.map((h) => h.path)).toEqual(['tree/notes.txt']);
    expect(Object.keys(json[0])).toEqual(['digest', 'path', 'mediaType', 'size', 'score', 'snippet', 'matched', 'keyword']);
    expect(json[0]).toMatchObject({ matched: ['keyword'], keyword: { rank: 1 } });
    expect(kura(['search', '--store', store, '--prefix', 'tree/guides/', 'harbour']).stdout).not.toContain('notes.txt');
    expect(kura(['search', '--store', store, '--tag', 'nope', 'harbour']).stdout).toBe('');
    // `./tree/guides/` is the prefix `tree/guides/`, as add reads paths (it found nothing: a trial).
    expect(kura(['search', '--store', store, '--prefix', './tree/guides/', 'harbour']).stdout).toContain('tree/guides/harbour.md');
    // A floor for hits by meaning, given to keyword search: said, not ignored (a trial).
    const floor = kura(['search', '--store', store, '--mode', 'keyword', '--min-score', '0.3', 'harbour']);
    expect([floor.code, floor.stderr]).toEqual([2, expect.stringMatching(/--min-score is the least similarity of a hit by meaning/)]);
    // By time, as kura ls and GET /v1/search do (the CLI had no --since/--until: a trial).
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    expect(kura(['search', '--store', store, '--mode', 'keyword', '--since', '2000-01-01', 'harbour']).stdout).toContain('tree/notes.txt');
    expect(kura(['search', '--store', store, '--mode', 'keyword', '--since', tomorrow, 'harbour']).stdout).toBe('');
    expect(kura(['search', '--store', store, '--mode', 'keyword', '--until', '2000-01-01', 'harbour']).stdout).toBe('');
    expect(kura(['search', '--store', store, '--since', 'yesterday', 'harbour']).code).toBe(2);
  });

  it('finds PDF, DOCX and HTML files by their text; kura index reports what extraction left and names failures', async () => {
    const { store, root } = setup();
    const docs = join(root, 'docs');
    mkdirSync(docs);
    writeFileSync(join(docs, 'minutes.pdf'), makePdf(['Minutes: the platypuskazoo was approved.']));
    writeFileSync(join(docs, 'letter.docx'), await makeDocx(['Dear committee, about the kookaburratuba.']));
    writeFileSync(join(docs, 'page.html'), makeHtml('Notes', ['The cassowarylute arrived.']));
    writeFileSync(join(docs, 'broken.pdf'), '%PDF-1.4 and nothing else');
    expect(kura(['add', '--store', store, 'docs'], root).code).toBe(0);
    // `kura add` left the extraction for later (decision 0035): queued, not done.
    const before = JSON.parse(kura(['index', '--store', store, '--json']).stdout);
    expect(before.queued).toBe(4);
    expect(before.extracted).toEqual({ ok: 0, capped: 0, failed: 0 });
    // A search finishes it first.
    expect(kura(['search', '--store', store, 'platypuskazoo']).stdout).toContain('docs/minutes.pdf');
    expect(kura(['search', '--store', store, 'kookaburratuba']).stdout).toContain('docs/letter.docx');
    expect(kura(['search', '--store', store, 'cassowarylute']).stdout).toContain('docs/page.html');
    const after = kura(['index', '--store', store, '--wait']);
    expect(after.code).toBe(0);
    expect(after.stdout).toMatch(/queued {6}0 entries to index/);
    expect(after.stdout).toMatch(/4 documents \(PDF, DOCX, HTML\): 3 ok, 0 capped, 1 failed/);
    expect(after.stdout).toMatch(/sha256:[0-9a-f]{64} {2}docs\/broken\.pdf {2}pdf failed: pdf: /);
    // The model is installed (set-up fetches it): the searches embedded every document (the
    // broken one with no chunks); nothing is left.
    expect(after.stdout).toMatch(/embedded {4}\d+ documents in [1-9]\d* chunks?, 0 to embed \(all-MiniLM-L6-v2-int8@8199be6f\)/);
  });

  it('--mode semantic answers a question by meaning that keyword search cannot; hybrid is the default with the model', () => {
    const { store, root } = setup();
    writeFileSync(join(root, 'oil.txt'), 'Motor lubricant should be replaced every 8,000 kilometres; check the dipstick monthly.\n');
    expect(kura(['add', '--store', store, 'oil.txt'], root).code).toBe(0);
    const question = 'What maintenance does my automobile require?';
    expect(kura(['search', '--store', store, '--mode', 'keyword', question]).stdout).toBe('');
    const semantic = kura(['search', '--store', store, '--mode', 'semantic', '--json', question]).stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(semantic[0]).toMatchObject({ path: 'oil.txt', semantic: { rank: 1 } });
    const hybrid = kura(['search', '--store', store, '--json', question]).stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(hybrid[0]).toMatchObject({ path: 'oil.txt', semantic: { rank: 1 } });
    // Human output says a hit was found by meaning alone: no word of the question is marked in it.
    expect(kura(['search', '--store', store, question]).stdout).toMatch(/oil\.txt\n {4}\(by meaning\) Motor lubricant/);
    expect(kura(['search', '--store', store, 'dipstick']).stdout).not.toContain('(by meaning)');
    // --wait-ms: documents not embedded in time are left out of the semantic ranking, and said so.
    for (let i = 0; i < 30; i++) writeFileSync(join(root, `n${i}.txt`), `Note ${i}: the tyres were rotated and the brakes checked.\n`);
    expect(kura(['add', '--store', store, ...Array.from({ length: 30 }, (_, i) => `n${i}.txt`)], root).code).toBe(0);
    const hurried = kura(['search', '--store', store, '--mode', 'semantic', '--wait-ms', '0', question]);
    expect(hurried.code).toBe(0);
    expect(hurried.stderr).toMatch(/kura: \d+ documents are not embedded yet: the semantic ranking left them out \(kura index --wait/);
    expect(kura(['search', '--store', store, '--wait-ms', 'soon', question]).code).toBe(2);
    // Without --wait-ms the backlog is embedded first, and that is said (it was silent: a trial).
    const patient = kura(['search', '--store', store, '--mode', 'semantic', question]);
    expect([patient.code, patient.stderr]).toEqual([0, expect.stringMatching(/^kura: embedding \d+ documents? before searching by meaning/)]);
    expect(kura(['search', '--store', store, '--mode', 'semantic', question]).stderr).toBe(''); // (nothing left to embed)
    // A `-word` anywhere is the grammar's exclusion, not an unknown option; a mistyped long option is still refused.
    expect(kura(['search', '--store', store, '--mode', 'keyword', 'brakes']).stdout).toMatch(/n\d+\.txt/);
    for (const args of [['brakes', '-tyres'], ['-tyres', 'brakes']]) {
      const r = kura(['search', '--store', store, '--mode', 'keyword', ...args]);
      expect([r.code, r.stdout], args.join(' ')).toEqual([0, expect.not.stringMatching(/n\d+\.txt/)]);
    }
    expect(kura(['search', '--store', store, '--limt', '5', 'brakes'])).toMatchObject({ code: 2, stderr: expect.stringMatching(/unknown option --limt/) });
    // Only filters: no hits (the grammar's rule), and why, with where to look instead.
    const filtersOnly = kura(['search', '--store', store, '--mode', 'keyword', 'type:text/plain']);
    expect(filtersOnly).toMatchObject({ code: 0, stdout: '', stderr: expect.stringMatching(/no words to search for in "type:text\/plain".*kura ls/) });
    expect(kura(['search', '--store', store, '--mode', 'keyword', 'brakes']).stderr).toBe('');
    const bad = kura(['search', '--store', store, '--mode', 'vector', question]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--mode must be keyword, semantic or hybrid/);
    // Without the model: keyword by default; semantic by name is MODEL_UNAVAILABLE, exit 1.
    const env = { ...process.env, KURA_MODEL_DIR: join(root, 'no-model') };
    const noModel = spawnSync(process.execPath, [BIN, 'search', '--store', store, '--mode', 'semantic', question], { env });
    expect(noModel.status).toBe(1);
    expect(noModel.stderr.toString()).toMatch(/MODEL_UNAVAILABLE/);
    expect(spawnSync(process.execPath, [BIN, 'search', '--store', store, 'dipstick'], { env }).stdout.toString()).toContain('oil.txt');
    expect(JSON.parse(spawnSync(process.execPath, [BIN, 'index', '--store', store, '--json'], { env }).stdout.toString()).embedding).toBeNull();
    expect(spawnSync(process.execPath, [BIN, 'index', '--store', store], { env }).stdout.toString()).toMatch(/embedded {4}- \(no embedding model installed/);
  });

  it('with KURA_EMBED_URL, searches by meaning through an OpenAI-compatible endpoint; one that is down fails loudly', { timeout: 60_000 }, async () => {
    const { store, root } = setup();
    writeFileSync(join(root, 'oil.txt'), 'Motor lubricant should be replaced every 8,000 kilometres; check the dipstick monthly.\n');
    expect(kura(['add', '--store', store, 'oil.txt'], root).code).toBe(0);
    const model = await loadMiniLm();
    const endpoint = await startEmbeddingServer(model, { model: 'minilm', key: 'sk-cli-test' });
    // (asynchronous: the endpoint answers from this process)
    const run = (args: string[], env: NodeJS.ProcessEnv) => promisify(execFile)(process.execPath, [BIN, ...args], { env: { ...process.env, ...env } }).catch((e: { code: number; stdout: string; stderr: string }) => e);
    const env = { KURA_EMBED_URL: endpoint.url, KURA_EMBED_MODEL: 'minilm', KURA_EMBED_API_KEY: 'sk-cli-test' };
    try {
      const r = await run(['search', '--store', store, '--mode', 'semantic', '--json', 'What maintenance does my automobile require?'], env);
      expect(JSON.parse(r.stdout.split('\n')[0]!)).toMatchObject({ path: 'oil.txt', semantic: { rank: 1 } });
      expect(endpoint.requests.some((q) => q.authorization === 'Bearer sk-cli-test')).toBe(true);
      const status = JSON.parse((await run(['index', '--store', store, '--json'], env)).stdout);
      expect(status.embedding).toMatchObject({ model: 'openai-compatible:minilm:384', pending: 0 });
    } finally {
      await endpoint.close();
      await model.close();
    }
    const down = await run(['search', '--store', store, 'dipstick'], { ...env, KURA_EMBED_URL: endpoint.url }); // closed now
    expect((down as { code: number }).code).toBe(1);
    expect(down.stderr).toMatch(/^kura: the embedding endpoint http:\/\/127\.0\.0\.1:\d+\/v1\/embeddings failed 4 times: ECONNREFUSED \[MODEL_UNAVAILABLE\]\n$/);
    expect(down.stderr).not.toContain('sk-cli-test');
  });

  it('malformed operator syntax is read as words, and stderr says so in one line', () => {
    const { store } = setup();
    // (Keyword: the default mode with the model installed embeds first, and says that too.)
    const r = kura(['search', '--store', store, '--mode', 'keyword', 'harbour AND']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('kura: "AND" at the end was read as a word\nkura: searched: harbour\n'); // (how it was read: once, after the notices)
  });
});

describe('kura versions and kura get PATH@N', () => {
  it('lists versions and reads each one back', () => {
    const { store, root } = setup();
    const file = addVersions(store, root, 'docs/draft.txt', ['first draft\n', 'second draft\n', 'second draft\n']); // the same bytes again: no version
    const v = kura(['versions', '--store', store, '--json', 'docs/draft.txt']).stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(v.map((x) => x.version)).toEqual([1, 2]);
    expect(kura(['get', '--store', store, 'docs/draft.txt@1']).stdout).toBe('first draft\n');
    expect(kura(['get', '--store', store, 'docs/draft.txt']).stdout).toBe('second draft\n');
    expect(kura(['cat', '--store', store, 'docs/draft.txt@1', v[1].digest]).stdout).toBe('first draft\nsecond draft\n');
    const missing = kura(['get', '--store', store, 'docs/draft.txt@7']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/NOT_FOUND/);
    expect(kura(['versions', '--store', store, 'nope']).code).toBe(1);
    expect(readFileSync(file, 'utf8')).toBe('second draft\n');
  });
});

describe('references that are not digests', () => {
  it('a word that is not a digest is read as a path: not found is exit 1', () => {
    const { store } = setup();
    const r = kura(['get', '--store', store, 'deadbeef']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^kura: no document at deadbeef \[NOT_FOUND\]\n$/);
  });
});

describe('a path as the user named it when adding', () => {
  it('the argument that added a file names it; from elsewhere, the message names the stored path', () => {
    const { store, root, tree } = setup(); // `kura add tree` in root: tree/guides/harbour.md
    // Normalized as add normalizes: the same spelling, or another of the same path, works.
    expect(kura(['get', '--store', store, './tree/./guides/harbour.md@1'], root).stdout).toContain('harbour master');
    expect(kura(['cat', '--store', store, 'tree/sub/../guides/harbour.md']).stdout).toContain('harbour master');
    // The absolute path of the file is another path (home/... as tar would store it).
    const hint = /; did you mean tree\/guides\/harbour\.md(@1)?\? \(kura add stores each file under the path it was given, relative to where it ran\) \[NOT_FOUND\]\n$/;
    for (const args of [
      ['versions', join(tree, 'guides/harbour.md')],
      ['get', join(tree, 'guides/harbour.md')],
      ['get', `${join(tree, 'guides/harbour.md')}@1`],
    ]) {
      const r = kura([args[0]!, '--store', store, ...args.slice(1)]);
      expect(r.code).toBe(1);
      expect(r.stderr.split('\n')).toHaveLength(2); // one line
      expect(r.stderr).toMatch(hint);
      if (args[1]!.endsWith('@1')) expect(r.stderr).toContain('did you mean tree/guides/harbour.md@1?');
    }
    // A stored path but a version it lacks: no hint, nor one for a version the other path lacks too.
    expect(kura(['get', '--store', store, 'tree/guides/harbour.md@9']).stderr).toBe('kura: no version 9 of tree/guides/harbour.md [NOT_FOUND]\n');
    expect(kura(['get', '--store', store, 'x/tree/guides/harbour.md@9']).stderr).toBe('kura: no version 9 of x/tree/guides/harbour.md [NOT_FOUND]\n');
    // Nothing that ends the same way: no hint.
    const none = kura(['get', '--store', store, 'tree/guides/lighthouse.md']);
    expect(none.stderr).toBe('kura: no document at tree/guides/lighthouse.md [NOT_FOUND]\n');
    expect(none.code).toBe(1);
    // A path that climbs above its start names nothing a store can hold: a usage error.
    expect(kura(['get', '--store', store, '../tree/notes.txt']).code).toBe(2);
  });
});

describe('kura tag and kura meta by path', () => {
  it('tags and metadata go on the path, across its versions; PATH@N is refused; a path that names nothing changes nothing', () => {
    const { store, root, tree } = setup();
    addVersions(store, root, 'plans/plan.md', ['plan one\n', 'plan two\n']);
    expect(kura(['tag', '--store', store, 'plans/plan.md', '--add', 'current']).code).toBe(0);
    // (Schema 6: tags belong to the path, not to one version; before, PATH@1 tagged version 1's document.)
    const versioned = kura(['tag', '--store', store, 'plans/plan.md@1', '--add', 'old']);
    expect(versioned.code).toBe(2);
    expect(versioned.stderr).toMatch(/belong to a path, not to one of its versions: name plans\/plan\.md/);
    expect(kura(['meta', '--store', store, 'plans/plan.md', 'owner=ada']).code).toBe(0);
    const byTag = (tag: string) => kura(['ls', '--store', store, '--json', '--tag', tag]).stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l).digest);
    const [v1, v2] = kura(['versions', '--store', store, '--json', 'plans/plan.md']).stdout.trim().split('\n').map((l) => JSON.parse(l).digest);
    expect(byTag('current')).toEqual([v2]);
    expect(byTag('old')).toEqual([]);
    expect(kura(['meta', '--store', store, 'plans/plan.md']).stdout).toBe('owner=ada\n');
    expect(kura(['meta', '--store', store, v1]).stdout).toBe(''); // an older version: no attributes
    expect(kura(['meta', '--store', store, v2]).stdout).toBe('owner=ada\n'); // the path showing it
    // Named by its absolute path: not found, with the stored path in the message.
    const wrong = kura(['tag', '--store', store, join(tree, 'guides/harbour.md'), '--add', 'x']);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/did you mean tree\/guides\/harbour\.md\?.*\[NOT_FOUND\]\n$/);
    expect(byTag('x')).toEqual([]);
  });
});
