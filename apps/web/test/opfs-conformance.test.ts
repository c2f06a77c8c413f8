/**
 * The PackStore contract checks (packages/store/test/conformance/packs.ts) against the OPFS
 * pack store, in a worker in Debian's Chromium: the page and worker are served from source by
 * Vite's dev server on 127.0.0.1.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext } from 'playwright-core';
import { createServer, type ViteDevServer } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packChecks } from '../../../packages/store/test/conformance/packs.js';
import { makeDocx, makeHtml, makePdf } from '../../../packages/store/test/helpers/documents.js';

const WEB = fileURLToPath(new URL('..', import.meta.url));
const REPO = fileURLToPath(new URL('../../..', import.meta.url));

let vite: ViteDevServer;
let context: BrowserContext;
let profile: string;
let results: { name: string; error?: string }[];

beforeAll(async () => {
  // Real documents for the extraction check, fetched by the worker (made here: Node has groff).
  const fixtures = join(WEB, 'test/opfs/fixtures');
  mkdirSync(fixtures, { recursive: true });
  writeFileSync(join(fixtures, 'doc.pdf'), makePdf(['Otters of the harbour', 'The second page mentions a quokkazeppelin at dawn.']));
  writeFileSync(join(fixtures, 'doc.docx'), await makeDocx(['Minutes of the meeting', 'We agreed to buy a wombatlantern for the hall.']));
  writeFileSync(join(fixtures, 'doc.html'), makeHtml('Field notes', ['A numbatcarousel turned all night.']));
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
  await page.waitForFunction(() => (window as unknown as { results?: unknown }).results !== undefined, null, { timeout: 60_000 });
  results = await page.evaluate(() => (window as unknown as { results: { name: string; error?: string }[] }).results);
});

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

describe('text extraction in a browser store (Chromium worker)', () => {
  it('finds PDF, DOCX and HTML by words only inside them; a damaged PDF is reported', () => {
    expect(results.find((x) => x.name === 'text extracted from PDF, DOCX and HTML')?.error).toBeUndefined();
  });
});

describe('PackStore conformance: OPFS (Chromium worker)', () => {
  it('ran every check', () => {
    expect(results.map((r) => r.name)).toEqual([...packChecks.map((c) => c.name), 'text extracted from PDF, DOCX and HTML', 'store rebuilt from its log']);
  });
  for (const check of packChecks) {
    it(check.name, () => {
      const r = results.find((x) => x.name === check.name);
      expect(r?.error).toBeUndefined();
    });
  }
});
