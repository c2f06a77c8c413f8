/**
 * The PackStore contract checks (packages/store/test/conformance/packs.ts) against the OPFS
 * pack store, in a worker in Debian's Chromium: the page and worker are served from source by
 * Vite's dev server on 127.0.0.1. Beside them, checks of a whole browser store: rebuilt from its
 * log, text extracted, and the local model embedding as Node's does.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext } from 'playwright-core';
import { createServer, type ViteDevServer } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packChecks } from '../../../packages/store/test/conformance/packs.js';
import { defaultModelDir, loadMiniLm, loadMiniLmOnWorker, MINILM } from '../../../packages/store/src/node/index.js';
import { RETRIEVAL_SET } from '../../../packages/store/test/fixtures/retrieval-set.js';
import { makeDocx, makeHtml, makePdf } from '../../../packages/store/test/helpers/documents.js';
import { newStore } from '../../../packages/store/test/helpers/store.js';

const WEB = fileURLToPath(new URL('..', import.meta.url));
const REPO = fileURLToPath(new URL('../../..', import.meta.url));

let vite: ViteDevServer;
let context: BrowserContext;
let profile: string;
let results: { name: string; error?: string; detail?: string }[];

/**
 * What the browser must match: Node's vectors (onnxruntime-node) for the labelled set's texts
 * and questions and SEMANTIC.md's reference sentences, and Node's semantic and hybrid rankings
 * of the set's questions; the model's files beside them for the page to fetch.
 */
async function nodeSide(fixtures: string): Promise<void> {
  mkdirSync(join(fixtures, 'model'), { recursive: true });
  for (const f of Object.keys(MINILM.files)) copyFileSync(join(defaultModelDir(), f), join(fixtures, 'model', f));
  const questions = RETRIEVAL_SET.flatMap((d) => [d.meaning, d.keyword]);
  const texts = [...RETRIEVAL_SET.map((d) => d.text), ...questions, 'How do I reset my password?', 'Steps to recover a forgotten login credential'];
  const model = await loadMiniLm();
  const vectors = (await model.embed(texts)).map((v) => Array.from(v));
  await model.close();
  const { store } = await newStore();
  const onWorker = await loadMiniLmOnWorker();
  const rankings: Record<'semantic' | 'hybrid', string[][]> = { semantic: [], hybrid: [] };
  try {
    for (const d of RETRIEVAL_SET) await store.put(new TextEncoder().encode(d.text), { path: d.path });
    store.useEmbedder(onWorker);
    for (const mode of ['semantic', 'hybrid'] as const) {
      for (const q of questions) rankings[mode].push((await store.search(q, { mode, limit: 10 })).map((h) => h.path!));
    }
  } finally {
    await store.close();
    await onWorker.close();
  }
  writeFileSync(join(fixtures, 'semantic.json'), JSON.stringify({ texts, vectors, docs: RETRIEVAL_SET.map(({ path, text }) => ({ path, text })), questions, rankings }));
}

beforeAll(async () => {
  // Real documents for the extraction check, fetched by the worker (made here: Node has groff).
  const fixtures = join(WEB, 'test/opfs/fixtures');
  mkdirSync(fixtures, { recursive: true });
  writeFileSync(join(fixtures, 'doc.pdf'), makePdf(['Otters of the harbour', 'The second page mentions a quokkazeppelin at dawn.']));
  writeFileSync(join(fixtures, 'doc.docx'), await makeDocx(['Minutes of the meeting', 'We agreed to buy a wombatlantern for the hall.']));
  writeFileSync(join(fixtures, 'doc.html'), makeHtml('Field notes', ['A numbatcarousel turned all night.']));
  await nodeSide(fixtures);
  vite = await createServer({
    root: WEB,
    configFile: join(WEB, 'vite.config.ts'),
    logLevel: 'silent',
    server: { host: '127.0.0.1', port: 0, strictPort: false, fs: { allow: [REPO] }, hmr: false },
  });
  await vite.listen();
  const url = vite.resolvedUrls!.local[0]!;
  profile = mkdtempSync(join(tmpdir(), 'kura-opfs-profile-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  await page.goto(`${url}test/opfs/index.html`);
  await page.waitForFunction(() => (window as unknown as { results?: unknown }).results !== undefined, null, { timeout: 120_000 });
  results = await page.evaluate(() => (window as unknown as { results: { name: string; error?: string; detail?: string }[] }).results);
}, 180_000);

afterAll(async () => {
  await context?.close();
  await vite?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

describe('a browser store rebuilt from its log (Chromium worker)', () => {
  it('deleting its database in OPFS loses nothing: paths, versions, tags, metadata, snapshots, search', () => {
    expect(results.find((x) => x.name === 'store rebuilt from its log')?.error).toBeUndefined();
  });
});

describe('a browser store whose log cannot replace its database (Chromium worker)', () => {
  it('a log damaged inside fails the rebuild and changes nothing; a log cut short is refused (log-behind) unless forced (a trial: both lost the store)', () => {
    expect(results.find((x) => x.name === 'a rebuild keeps what the log cannot replace')?.error).toBeUndefined();
  });
});

describe('text extraction in a browser store (Chromium worker)', () => {
  it('finds PDF, DOCX and HTML by words only inside them; a damaged PDF is reported', () => {
    expect(results.find((x) => x.name === 'text extracted from PDF, DOCX and HTML')?.error).toBeUndefined();
  });
});

describe('the local model in a browser store (onnxruntime-web, Chromium worker)', () => {
  it('embeds within 1e-3 of Node, and ranks every labelled question as Node does (semantic and hybrid)', () => {
    const r = results.find((x) => x.name === 'the model embeds as in Node');
    expect(r?.error).toBeUndefined();
    console.log(`browser embedding: ${r?.detail}`);
  });
});

describe('PackStore conformance: OPFS (Chromium worker)', () => {
  it('ran every check', () => {
    expect(results.map((r) => r.name)).toEqual([...packChecks.map((c) => c.name), 'a rebuild keeps what the log cannot replace', 'text extracted from PDF, DOCX and HTML', 'the model embeds as in Node', 'store rebuilt from its log']);
  });
  for (const check of packChecks) {
    it(check.name, () => {
      const r = results.find((x) => x.name === check.name);
      expect(r?.error).toBeUndefined();
    });
  }
});
