/**
 * The browser demo end to end, in Debian's Chromium (playwright-core, never a browser
 * download): the built page (apps/web/dist) served by a real Kura server on 127.0.0.1, the
 * store in the page's OPFS, and a second real server (with a token, CORS for the page's
 * origin) as the sync target. Screenshots of the main states go to test-output/screenshots.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeAll, startServer, type TestServer } from '../../server/test/helpers/server.js';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../../../packages/core/test/helpers/chromium.js';
import { randomBytes as seededBytes } from '../../../packages/core/test/helpers/data.js';

const here = (rel: string) => fileURLToPath(new URL(rel, import.meta.url));
const DIST = here('../dist');
const SHOTS = here('../test-output/screenshots');
const TOKEN = 'sync-token-'.padEnd(40, 'x');

let site: TestServer; // serves the page (its own store is not used)
let target: TestServer; // the sync target
let profile: string | undefined;
let context: BrowserContext;
let page: Page;

const sha = (b: Uint8Array) => `sha256:${createHash('sha256').update(b).digest('hex')}`;
const text = new TextEncoder().encode(`Field notes.\nThe zephyrine moth appears at dusk near the old quarry.\n${'Ordinary words fill the rest of the page. '.repeat(400)}`);
// Seeded: where a chunk ends depends on the bytes, so how many chunks a 64-byte edit makes new
// does too. With the demo store's chunking (the default: seed 0, 16 KiB) these edits (here and
// third.bin's below) make one each; unseeded, 14 of 5,000 random files gave 4 to 11 (measured
// with @kura/core), and this test failed once in CI.
const data = Buffer.from(seededBytes(31, 3 << 20));
/** `data` with 64 bytes changed near the middle: shares all but one chunk with it. */
const edited = Buffer.from(data);
edited.set(seededBytes(131, 64), data.length >> 1);

async function shot(name: string) {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

async function ready() {
  await page.waitForFunction(() => document.querySelector('[data-testid=status]')?.textContent === 'Ready', null, { timeout: 30_000 });
}

async function stat(name: string): Promise<string> {
  return (await page.textContent(`[data-testid=stat-${name}]`))!.trim();
}

async function addFiles(files: { name: string; mimeType: string; buffer: Buffer }[]) {
  const before = await page.locator('[data-testid=added]').count();
  await page.setInputFiles('[data-testid=file-input]', files);
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid=added]').length >= n, before + files.length, { timeout: 60_000 });
  await ready();
}

/** A size as the page shows it (format.ts `bytes`: "612.3 KiB"), in bytes (to ~0.1%). */
function parseBytes(shown: string): number {
  const [v, unit] = shown.split(' ');
  return Number(v) * 1024 ** ['B', 'KiB', 'MiB', 'GiB', 'TiB'].indexOf(unit!);
}

/** The added-file card for `path` (the newest first). */
const card = (path: string) => page.locator(`[data-testid=added][data-path="${path}"]`).first();

async function serverDocs(): Promise<{ digest: string; path: string | null }[]> {
  const res = await request(`${target.url}/v1/documents?limit=1000`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return ((await res.body.json()) as { items: { digest: string; path: string | null }[] }).items;
}

beforeAll(async () => {
  if (!existsSync(join(DIST, 'index.html'))) throw new Error('apps/web/dist is missing: run scripts/build.sh (npm test does)');
  mkdirSync(SHOTS, { recursive: true });
  site = await startServer({ webRoot: DIST });
  target = await startServer({ noAuth: false, tokens: [{ token: TOKEN, scopes: ['read', 'write'] }], corsOrigins: [site.url] });
  // A persistent profile, like a person's browser (an incognito context keeps OPFS in memory).
  profile = mkdtempSync(join(tmpdir(), 'kura-web-profile-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    args: CHROMIUM_ARGS,
    acceptDownloads: true,
    viewport: { width: 1280, height: 900 },
    permissions: ['clipboard-read', 'clipboard-write'],
  });
  page = context.pages()[0] ?? (await context.newPage());
  page.on('pageerror', (e) => console.error('page error:', e.message));
});

afterAll(async () => {
  await context?.close();
  await closeAll();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

describe('the browser demo in Chromium', () => {
  it('opens an empty store in OPFS', async () => {
    await page.goto(site.url);
    await ready();
    expect(await stat('documents')).toBe('0');
    await expect(page.locator('[data-testid=empty]')).toBeTruthy();
    await shot('01-empty');
  });

  it('adds files: chunk maps, new bytes, dedup of identical and similar files', async () => {
    await addFiles([
      { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from(text) },
      { name: 'data.bin', mimeType: 'application/octet-stream', buffer: data },
    ]);
    expect(await stat('documents')).toBe('2');
    expect(await card('data.bin').getAttribute('data-digest')).toBe(sha(data));
    expect(Number(await card('data.bin').getAttribute('data-new-bytes'))).toBeGreaterThan(data.length * 0.99);

    // The same bytes again: nothing new is stored.
    await addFiles([{ name: 'copy.bin', mimeType: 'application/octet-stream', buffer: data }]);
    expect(await card('copy.bin').getAttribute('data-new-bytes')).toBe('0');
    // Two files, one document (decision 0025).
    expect(await stat('entries')).toBe('3');
    expect(await stat('documents')).toBe('2');
    const map = card('copy.bin').locator('canvas.chunkmap');
    expect(await map.getAttribute('data-new')).toBe('0');

    // A small edit: only the chunks around it are new; the dedup ratio shows the sharing.
    await addFiles([{ name: 'edited.bin', mimeType: 'application/octet-stream', buffer: edited }]);
    const newBytes = Number(await card('edited.bin').getAttribute('data-new-bytes'));
    expect(newBytes).toBeGreaterThan(0);
    expect(newBytes).toBeLessThan(200_000);
    const editedMap = card('edited.bin').locator('canvas.chunkmap');
    expect(Number(await editedMap.getAttribute('data-new'))).toBeLessThanOrEqual(3);
    expect(await stat('documents')).toBe('3');
    expect(await stat('entries')).toBe('4');
    // A digest is shown short; its title holds it whole, and a click copies it whole.
    const digest = card('data.bin').getByTestId('copy-digest');
    expect(await digest.getAttribute('title')).toBe(sha(data));
    expect((await digest.textContent())!.length).toBeLessThan(sha(data).length);
    await digest.click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(sha(data));
    expect(parseFloat(await stat('dedup'))).toBeGreaterThan(2.5) // three files' worth over about one's bytes;
    expect(parseFloat(await stat('compression'))).toBeGreaterThanOrEqual(1); // random bytes dominate: about 1
    await shot('02-added');
  });

  it('finds a text document by a word inside it', async () => {
    await page.fill('[data-testid=search-input]', 'zephyrine');
    await page.press('[data-testid=search-input]', 'Enter');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=doc]').length === 1 && !!document.querySelector('.snippet mark'), null, { timeout: 15_000 });
    expect(await page.locator('[data-testid=doc]').getAttribute('data-digest')).toBe(sha(text));
    expect(await page.locator('.snippet mark').first().textContent()).toBe('zephyrine');
    await shot('03-search');
    // Malformed operator syntax is read as words, and the page says so (the same grammar as Node's).
    await page.fill('[data-testid=search-input]', 'zephyrine AND');
    await page.press('[data-testid=search-input]', 'Enter');
    await page.waitForSelector('[data-testid=search-fallbacks]', { timeout: 15_000 });
    expect(await page.textContent('[data-testid=search-fallbacks]')).toContain('"AND" at the end was read as a word');
    expect(await page.locator('[data-testid=doc]').count()).toBe(1);
    // A typo in a query that found nothing is read as the index's nearest word, and said
    // (the browser's SQLite has fts5vocab too).
    await page.fill('[data-testid=search-input]', 'zephyrinne');
    await page.press('[data-testid=search-input]', 'Enter');
    await page.waitForFunction(() => /"zephyrinne" is in no document: searched "zephyrine" instead/.test(document.querySelector('[data-testid=search-fallbacks]')?.textContent ?? ''), null, { timeout: 15_000 });
    expect(await page.locator('[data-testid=doc]').count()).toBe(1);
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=doc]').length === 4, null, { timeout: 15_000 });
  });

  it('answers a question by meaning (the local model in a worker), with a mode switch and indexing progress', async () => {
    await addFiles([{ name: 'oil.txt', mimeType: 'text/plain', buffer: Buffer.from('Motor lubricant should be replaced every 8,000 kilometres; check the dipstick monthly.\n') }]);
    // The server serves the model beside the page; the page says when every document (the new
    // one too: the line is polled, and may still show the state from before the add) is understood.
    await page.waitForFunction(() => {
      const i = document.querySelector('[data-testid=indexing]');
      return i?.getAttribute('data-state') === 'ready' && i.getAttribute('data-pending') === '0' && /all 4 documents searchable by meaning/.test(i.textContent ?? '');
    }, null, { timeout: 60_000 });
    const question = 'How often does my automobile require servicing?'; // no word of the document
    const search = async (mode: string) => {
      await page.selectOption('[data-testid=search-mode]', mode);
      await page.fill('[data-testid=search-input]', question);
      await page.press('[data-testid=search-input]', 'Enter');
      await ready();
    };
    await search('keyword');
    await page.waitForSelector('[data-testid=empty]');
    await search('semantic');
    await page.waitForFunction(() => document.querySelector('[data-testid=doc] button.link')?.textContent === 'oil.txt', null, { timeout: 30_000 });
    expect(await page.locator('[data-testid=matched-by]').first().textContent()).toBe('matched by meaning');
    await search('hybrid');
    await page.waitForFunction(() => document.querySelector('[data-testid=doc] button.link')?.textContent === 'oil.txt', null, { timeout: 30_000 });
    await shot('03b-search-by-meaning');
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=doc]').length === 5, null, { timeout: 15_000 });
    // The tests after this count the documents above: this one goes again (asked first).
    const asked = new Promise<string>((resolve) => page.once('dialog', (d) => (resolve(d.message()), void d.accept())));
    await page.getByRole('button', { name: 'Delete oil.txt' }).click();
    expect(await asked).toMatch(/^Delete oil\.txt and all its versions\?/);
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=doc]').length === 4, null, { timeout: 15_000 });
  });

  it('downloads documents byte for byte; details show the document and edit its tags; the list filters by tag', async () => {
    for (const [path, bytes] of [
      ['notes.txt', Buffer.from(text)],
      ['edited.bin', edited],
    ] as const) {
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: `Download ${path}` }).click()]);
      expect(download.suggestedFilename()).toBe(path);
      const saved = join(SHOTS, '..', `download-${path}`);
      await download.saveAs(saved);
      expect(sha(readFileSync(saved))).toBe(sha(bytes));
    }
    await page.getByRole('button', { name: 'notes.txt', exact: true }).click();
    await page.waitForSelector('[data-testid=details][open]');
    expect(await page.textContent('[data-testid=details]')).toContain(sha(text));
    // Tag it from the dialog, then filter the list by that tag.
    await page.getByLabel('New tag').fill('field');
    await page.getByRole('button', { name: 'Add tag' }).click();
    await page.waitForSelector('[data-testid=details] .chips li');
    expect(await page.textContent('[data-testid=details] .chips')).toContain('field');
    await shot('04-details');
    await page.getByRole('button', { name: 'Close' }).click();
    await page.selectOption('[data-testid=tag-filter]', 'field');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=doc]').length === 1, null, { timeout: 15_000 });
    expect(await page.locator('[data-testid=doc]').getAttribute('data-digest')).toBe(sha(text));
    await page.selectOption('[data-testid=tag-filter]', '');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=doc]').length === 4, null, { timeout: 15_000 });
  });

  it('keeps the store across a reload', async () => {
    await page.reload();
    await ready();
    expect(await stat('documents')).toBe('3');
    expect(await page.locator('[data-testid=doc]').count()).toBe(4); // data.bin and copy.bin: one document
  });

  it('a second tab is told the store is open elsewhere, and changes nothing', async () => {
    const second = await context.newPage();
    await second.goto(site.url);
    await second.waitForSelector('[data-testid=fatal]', { timeout: 30_000 });
    expect(await second.textContent('[data-testid=fatal]')).toMatch(/open in another tab/);
    await second.screenshot({ path: join(SHOTS, '05a-second-tab.png') });
    await second.close();
    expect(await stat('documents')).toBe('3');
  });

  it('adds files dropped on the page', async () => {
    await page.evaluate(() => {
      const dt = new DataTransfer();
      dt.items.add(new File(['dropped on the page, not picked'], 'dropped.txt', { type: 'text/plain' }));
      document.querySelector('.drop')!.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    });
    await page.waitForSelector('[data-testid=added][data-path="dropped.txt"]', { timeout: 30_000 });
    await ready();
    expect(await stat('documents')).toBe('4');
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Delete dropped.txt' }).click();
    await page.waitForFunction(() => document.querySelector('[data-testid=stat-documents]')?.textContent === '3', null, { timeout: 15_000 });
  });

  it('snapshots a picked folder, and a second snapshot of it changed a little stores only the change', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'kura-web-snap-'));
    const folder = join(parent, 'holiday');
    mkdirSync(join(folder, 'photos'), { recursive: true });
    const photo = randomBytes(600_000);
    writeFileSync(join(folder, 'photos', 'beach.raw'), photo);
    writeFileSync(join(folder, 'notes.txt'), 'day one\n');
    const snapshotOf = async (n: number) => {
      await page.setInputFiles('[data-testid=snapshot-input]', folder);
      await page.waitForFunction((k) => document.querySelectorAll('[data-testid=snapshot]').length >= k, n, { timeout: 60_000 });
      await ready();
    };
    const storedBefore = await stat('stored');
    await snapshotOf(1);
    const first = page.locator('[data-testid=snapshot]').first();
    expect(await first.getAttribute('data-label')).toBe('holiday');
    expect(await first.textContent()).toContain('2 files');
    writeFileSync(join(folder, 'notes.txt'), 'day one\nday two\n');
    await snapshotOf(2);
    expect(await page.locator('[data-testid=snapshot]').first().textContent()).toContain('2 files');
    await shot('06-snapshots');
    // The photo is stored once: the store grew by about its size, not twice that.
    const grown = parseBytes(await stat('stored')) - parseBytes(storedBefore);
    expect(grown).toBeGreaterThan(500_000);
    expect(grown).toBeLessThan(900_000);
    rmSync(parent, { recursive: true, force: true });
  });

  it('runs GC and verify clean', async () => {
    await page.getByRole('button', { name: 'Run GC' }).click();
    await page.waitForSelector('[data-testid=gc-report]');
    await ready();
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForSelector('[data-testid=verify-report]');
    expect(await page.getAttribute('[data-testid=verify-report]', 'data-ok')).toBe('true');
    // The database (OPFS) compared with a replay of the log in memory (decision 0073).
    expect(Number(await page.textContent('[data-testid=catalog-rows]'))).toBeGreaterThan(0);
    await shot('05-gc-verify');
  });

  it('pushes to a real server sending only the chunks it lacks, and pulls what it has', async () => {
    await page.fill('[data-testid=sync-url]', target.url);
    // Without the token: a clear message, nothing sent.
    await page.getByRole('button', { name: 'Push' }).click();
    await page.waitForSelector('[data-testid=error]');
    expect(await page.textContent('[data-testid=error]')).toMatch(/wants a token/);
    await ready();

    await page.fill('[data-testid=sync-token]', TOKEN);
    await page.getByRole('button', { name: 'Push' }).click();
    await page.waitForSelector('[data-testid=sync-report][data-kind=push]');
    const first = page.locator('[data-testid=sync-report]');
    const logical = Number(await first.getAttribute('data-logical'));
    const sent = Number(await first.getAttribute('data-bytes-sent'));
    // copy.bin is data.bin's bytes under another name: its name goes too (no chunk of it).
    expect(logical).toBe(text.length + data.length + edited.length + data.length);
    // data.bin and edited.bin share almost every chunk: about one copy crosses the wire.
    expect(sent).toBeLessThan(text.length + data.length + 300_000);
    expect(sent).toBeGreaterThanOrEqual(data.length);
    const onServer = await serverDocs();
    expect(onServer.map((d) => `${d.path} ${d.digest}`).sort()).toEqual([`notes.txt ${sha(text)}`, `data.bin ${sha(data)}`, `copy.bin ${sha(data)}`, `edited.bin ${sha(edited)}`].sort());
    await shot('06-pushed');

    // A new file that shares most chunks with what the server has: only the new ones go.
    const third = Buffer.from(data);
    third.set(seededBytes(231, 64), 100_000);
    await addFiles([{ name: 'third.bin', mimeType: 'application/octet-stream', buffer: third }]);
    await page.getByRole('button', { name: 'Push' }).click();
    await page.waitForFunction(() => document.querySelector('[data-testid=sync-report]')?.textContent?.includes('Pushed 1 document ('), null, { timeout: 30_000 });
    const again = Number(await page.getAttribute('[data-testid=sync-report]', 'data-bytes-sent'));
    expect(again).toBeGreaterThan(0);
    expect(again).toBeLessThan(200_000); // of 3 MiB
    expect((await serverDocs()).map((d) => d.digest)).toContain(sha(third));

    // Bytes the server has, under a new name: the name goes, no chunk does (it was counted
    // "already there" and the server never got the name).
    await addFiles([{ name: 'copy-of-third.bin', mimeType: 'application/octet-stream', buffer: third }]);
    await page.getByRole('button', { name: 'Push' }).click();
    // (5: the report of the push before said 4; this one must be new.)
    await page.waitForFunction(() => /Pushed 1 document \(.*\), 5 already there/.test(document.querySelector('[data-testid=sync-report]')?.textContent ?? ''), null, { timeout: 30_000 });
    expect(Number(await page.getAttribute('[data-testid=sync-report]', 'data-bytes-sent'))).toBe(0);
    expect((await serverDocs()).filter((d) => d.digest === sha(third)).map((d) => d.path).sort()).toEqual(['copy-of-third.bin', 'third.bin']);

    // Pull: a document only the server has comes down, checked against its digest.
    const remoteOnly = new TextEncoder().encode('only on the server: pulled into the browser');
    const put = await request(`${target.url}/v1/documents?path=remote.txt`, {
      method: 'POST',
      body: remoteOnly,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/plain' },
    });
    expect(put.statusCode).toBe(201);
    await put.body.dump();
    await ready();
    await page.getByRole('button', { name: 'Pull' }).click();
    await page.waitForSelector('[data-testid=sync-report][data-kind=pull]');
    expect(await page.textContent('[data-testid=sync-report]')).toContain('Pulled 1 document (');
    await ready();
    expect(await stat('documents')).toBe('5');
    expect(await page.locator(`[data-testid=doc][data-digest="${sha(remoteOnly)}"]`).count()).toBe(1);
    // The same bytes under another name on the server: linked here, nothing fetched.
    const again2 = await request(`${target.url}/v1/documents?path=remote-copy.txt`, { method: 'POST', body: remoteOnly, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/plain' } });
    expect(again2.statusCode).toBe(201);
    await again2.body.dump();
    const before = await page.textContent('[data-testid=sync-report]');
    await page.getByRole('button', { name: 'Pull' }).click();
    // (A new report: the pull before also pulled one document.)
    await page.waitForFunction((b) => { const t = document.querySelector('[data-testid=sync-report]')?.textContent ?? ''; return t !== b && /Pulled 1 document \(0 B\)/.test(t); }, before, { timeout: 30_000 });
    await ready();
    expect(await page.locator(`[data-testid=doc][data-digest="${sha(remoteOnly)}"]`).count()).toBe(2);

    // notes.txt changed on the server: a push leaves the server's newer version the latest
    // (it sent the tab's older one over it), and a pull brings it here.
    const newer = new TextEncoder().encode('notes.txt as edited on the server\n');
    const edit = await request(`${target.url}/v1/documents?path=notes.txt`, { method: 'POST', body: newer, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/plain' } });
    expect(edit.statusCode).toBe(201);
    await edit.body.dump();
    const latestOnServer = async () => ((await (await request(`${target.url}/v1/entry?path=notes.txt`, { headers: { authorization: `Bearer ${TOKEN}` } })).body.json()) as { digest: string }).digest;
    const beforePush = await page.textContent('[data-testid=sync-report]');
    await page.getByRole('button', { name: 'Push' }).click();
    await page.waitForFunction((b) => { const t = document.querySelector('[data-testid=sync-report]')?.textContent ?? ''; return t !== b && /^Pushed 0 documents/.test(t); }, beforePush, { timeout: 30_000 });
    expect(await latestOnServer()).toBe(sha(newer));
    await ready();
    const beforePull = await page.textContent('[data-testid=sync-report]');
    await page.getByRole('button', { name: 'Pull' }).click();
    await page.waitForFunction((b) => { const t = document.querySelector('[data-testid=sync-report]')?.textContent ?? ''; return t !== b && /^Pulled 1 document/.test(t); }, beforePull, { timeout: 30_000 });
    await ready();
    expect(await page.locator(`[data-testid=doc][data-digest="${sha(newer)}"]`).count()).toBe(1);
  });

  it('verify reports a tampered chunk', async () => {
    // Leave the page (its worker, holding the pack files, ends) for a page of the same origin,
    // and flip one byte in the middle of the largest pack.
    await page.goto(`${site.url}/healthz`);
    const tampered = await page.evaluate(async () => {
      const root = await navigator.storage.getDirectory();
      const packs = await (await (await root.getDirectoryHandle('kura')).getDirectoryHandle('default')).getDirectoryHandle('packs');
      let best: { name: string; size: number } | undefined;
      for await (const [name, h] of (packs as unknown as { entries(): AsyncIterable<[string, FileSystemFileHandle]> }).entries()) {
        const size = (await h.getFile()).size;
        if (!best || size > best.size) best = { name, size };
      }
      const fh = await packs.getFileHandle(best!.name);
      const at = Math.floor(best!.size / 2);
      const byte = new Uint8Array(await (await fh.getFile()).slice(at, at + 1).arrayBuffer());
      const w = await fh.createWritable({ keepExistingData: true });
      await w.write({ type: 'write', position: at, data: new Uint8Array([byte[0]! ^ 0xff]) });
      await w.close();
      return best;
    });
    expect(tampered?.size).toBeGreaterThan(1 << 20);
    await page.goto(site.url);
    await ready();
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForSelector('[data-testid=verify-report]');
    expect(await page.getAttribute('[data-testid=verify-report]', 'data-ok')).toBe('false');
    expect(Number(await page.textContent('[data-testid=damaged-chunks]'))).toBeGreaterThanOrEqual(1);
    expect(Number(await page.textContent('[data-testid=damaged-documents]'))).toBeGreaterThanOrEqual(1);
    await shot('07-damaged');
  });

  it('an acknowledged add survives a crash of the page, byte for byte', async () => {
    // Pack appends are gathered in memory and written before each commit (decision 0014): a
    // renderer crash right after the add returns must find every byte of it in OPFS. The
    // database's commits are then in its WAL alone (decision 0052: no checkpoint yet, the
    // WAL's index was in the heap), 150 small files making several transactions of them.
    const crashProof = randomBytes(2_500_000);
    const small = Array.from({ length: 150 }, (_, i) => ({ name: `crash-${i}.txt`, mimeType: 'text/plain', buffer: Buffer.from(`small file ${i} ${randomBytes(600).toString('hex')}`) }));
    const entries = Number(await stat('entries'));
    await addFiles([{ name: 'crash.bin', mimeType: 'application/octet-stream', buffer: crashProof }, ...small]);
    expect(await card('crash.bin').getAttribute('data-digest')).toBe(sha(crashProof));
    expect(Number(await stat('entries'))).toBe(entries + 151);
    const cdp = await context.newCDPSession(page);
    const crashed = page.waitForEvent('crash');
    void cdp.send('Page.crash').catch(() => undefined); // never answered: the renderer is gone
    await crashed;
    await page.close().catch(() => undefined);
    page = await context.newPage();
    page.on('pageerror', (e) => console.error('page error:', e.message));
    await page.goto(site.url);
    await ready();
    expect(Number(await stat('entries'))).toBe(entries + 151);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download crash.bin' }).click()]);
    const saved = join(SHOTS, '..', 'download-crash.bin');
    await download.saveAs(saved);
    expect(sha(readFileSync(saved))).toBe(sha(crashProof));
  });

  it('hashes a file above the native-digest limit with the streaming hasher, to the same digest', async () => {
    // Files up to NATIVE_DIGEST_MAX (128 MiB) are hashed by SubtleCrypto, larger ones by the
    // kernel's wasm SHA-256 as they stream: both must give node:crypto's digest. Mostly zeros
    // (cheap to chunk and store), with random bytes at both ends.
    const big = Buffer.alloc((128 << 20) + 4097);
    randomBytes(1 << 20).copy(big, 0);
    randomBytes(1 << 20).copy(big, big.length - (1 << 20));
    const path = join(SHOTS, '..', 'big-zeros.bin');
    writeFileSync(path, big);
    try {
      const before = await page.locator('[data-testid=added]').count();
      await page.setInputFiles('[data-testid=file-input]', path);
      await page.waitForFunction((n) => document.querySelectorAll('[data-testid=added]').length > n, before, { timeout: 120_000 });
      await ready();
      expect(await card('big-zeros.bin').getAttribute('data-digest')).toBe(sha(big));
    } finally {
      rmSync(path, { force: true });
    }
  });

  it('a search by meaning right after many text files answers within a second and says how many it could not see yet', async () => {
    // A chunk of ~250 words takes the model here ~0.1 s: 60 such notes are a backlog of
    // seconds, and a search waits one.
    const words = 'the tyres were rotated and the brakes were checked at the garage before the long drive north'.split(' ');
    const notes = Array.from({ length: 60 }, (_, i) => ({
      name: `note-${i}.txt`,
      mimeType: 'text/plain',
      buffer: Buffer.from(`Note ${i}: ${Array.from({ length: 250 }, (_, w) => words[(w * 7 + i) % words.length]).join(' ')}.\n`),
    }));
    await addFiles(notes);
    await page.selectOption('[data-testid=search-mode]', 'semantic');
    await page.fill('[data-testid=search-input]', 'When was the car last looked at by a mechanic?');
    await page.press('[data-testid=search-input]', 'Enter');
    await page.waitForSelector('[data-testid=not-embedded]', { timeout: 30_000 });
    const said = (await page.locator('[data-testid=not-embedded]').textContent())!;
    expect(Number(/^(\d+) documents? (is|are) still being understood/.exec(said)?.[1])).toBeGreaterThan(0);
  });

  it('finds Chinese, Thai and Korean words inside sentences, as Node does', async () => {
    await addFiles([
      { name: 'zh-library.txt', mimeType: 'text/plain', buffer: Buffer.from('市立图书馆每天早上九点开门，借书需要带上借书证。') },
      { name: 'th-food.txt', mimeType: 'text/plain', buffer: Buffer.from('ข้าวผัดเป็นอาหารไทยที่นิยมมาก ทำง่ายและอร่อย') },
      { name: 'ko-subway.txt', mimeType: 'text/plain', buffer: Buffer.from('서울 지하철은 매일 새벽 5시 30분부터 운행합니다.') },
      // The same bytes under a second name: one hit, the other name under it (decision 0072).
      { name: 'zh-library-copy.txt', mimeType: 'text/plain', buffer: Buffer.from('市立图书馆每天早上九点开门，借书需要带上借书证。') },
    ]);
    await page.selectOption('[data-testid=search-mode]', 'keyword');
    for (const [q, path] of [['图书馆', 'zh-library.txt'], ['ข้าวผัด', 'th-food.txt'], ['지하철', 'ko-subway.txt']] as const) {
      await page.fill('[data-testid=search-input]', q);
      await page.press('[data-testid=search-input]', 'Enter');
      await page.waitForFunction((p) => document.querySelectorAll('[data-testid=doc]').length === 1 && !!document.querySelector('[data-testid=doc]')?.textContent?.includes(p), path, { timeout: 15_000 });
      expect(await page.locator('.snippet mark').count()).toBeGreaterThan(0);
    }
    await page.fill('[data-testid=search-input]', '图书馆');
    await page.press('[data-testid=search-input]', 'Enter');
    await page.waitForSelector('[data-testid=also-at]', { timeout: 15_000 });
    expect(await page.locator('[data-testid=doc]').count()).toBe(1);
    expect(await page.textContent('[data-testid=also-at]')).toBe('also at zh-library-copy.txt');
    // Only a filter: nothing to rank by, and said so (it said "Nothing matches.").
    await page.fill('[data-testid=search-input]', 'type:text/plain');
    await page.press('[data-testid=search-input]', 'Enter');
    await page.waitForFunction(() => /No words to search for/.test(document.querySelector('[data-testid=empty]')?.textContent ?? ''), null, { timeout: 15_000 });
    await page.fill('[data-testid=search-input]', '');
    await page.press('[data-testid=search-input]', 'Enter');
  });

  it("opens an older version as the path's version: its name, type and a download named for it; tags kept read-only", async () => {
    await addFiles([{ name: 'plan.md', mimeType: 'text/markdown', buffer: Buffer.from('# Plan\nfirst draft\n') }]);
    await addFiles([{ name: 'plan.md', mimeType: 'text/markdown', buffer: Buffer.from('# Plan\nsecond draft\n') }]);
    // (Found by a word: the list's first page holds older documents.)
    await page.fill('[data-testid=search-input]', 'draft');
    await page.press('[data-testid=search-input]', 'Enter');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=doc]').length === 1, null, { timeout: 15_000 });
    await page.getByRole('button', { name: 'plan.md', exact: true }).click();
    await page.waitForSelector('[data-testid=details][open]');
    await page.getByRole('button', { name: 'Open version 1' }).click();
    await page.waitForFunction(() => document.querySelector('#details-h')?.textContent?.includes('(version 1)'), null, { timeout: 15_000 });
    const details = (await page.textContent('[data-testid=details]'))!;
    expect(details).toContain(sha(Buffer.from('# Plan\nfirst draft\n')));
    expect(details).toContain('text/markdown'); // (it showed "—")
    expect(await page.getByRole('button', { name: 'Add tag' }).count()).toBe(0); // (it failed: "name the path and version instead")
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('[data-testid=details]').getByRole('button', { name: 'Download' }).click()]);
    expect(download.suggestedFilename()).toBe('plan.md'); // (it was named by a digest)
    await page.getByRole('button', { name: 'Close' }).click();
  });

  it('a damaged database is rebuilt from the log at a click, everything kept (it left the page "Unavailable" for good)', async () => {
    await ready();
    const before = { documents: await stat('documents'), entries: await stat('entries') };
    expect(Number(before.entries)).toBeGreaterThan(0);
    // Away from the page (its worker lets go of the files), the database's first 100 bytes
    // flipped: the SQLite pool keeps each file behind a 4 KiB header naming it.
    await page.goto(`${site.url}/healthz`);
    const flipped = await page.evaluate(async () => {
      const root = await navigator.storage.getDirectory();
      const files: FileSystemFileHandle[] = [];
      const walk = async (d: FileSystemDirectoryHandle): Promise<void> => {
        for await (const [, h] of (d as unknown as { entries(): AsyncIterable<[string, FileSystemHandle]> }).entries()) {
          if (h.kind === 'directory') await walk(h as FileSystemDirectoryHandle);
          else files.push(h as FileSystemFileHandle);
        }
      };
      await walk(await (await (await root.getDirectoryHandle('kura')).getDirectoryHandle('default')).getDirectoryHandle('sqlite'));
      let flipped = 0;
      for (const h of files) {
        const head = new Uint8Array(await (await h.getFile()).slice(0, 64).arrayBuffer());
        // (The WAL's header too: a valid WAL holds the newest copy of the header page.)
        if (!['/kura.db', '/kura.db-wal'].includes(new TextDecoder().decode(head.slice(0, head.indexOf(0))))) continue;
        const bytes = new Uint8Array(await (await h.getFile()).slice(4096, 4196).arrayBuffer()).map((b) => b ^ 0xff);
        const w = await h.createWritable({ keepExistingData: true });
        await w.write({ type: 'write', position: 4096, data: bytes });
        await w.close();
        flipped++;
      }
      return flipped;
    });
    expect(flipped).toBeGreaterThanOrEqual(1);
    await page.goto(site.url);
    await page.waitForSelector('[data-testid=fatal]');
    expect(await page.textContent('[data-testid=status]')).toBe('Unavailable');
    expect(await page.textContent('[data-testid=fatal]')).toMatch(/database is damaged\. Nothing is lost/);
    await page.click('[data-testid=rebuild]');
    await ready();
    expect({ documents: await stat('documents'), entries: await stat('entries') }).toEqual(before);
    expect(await page.locator('[data-testid=fatal]').count()).toBe(0);
  });
});
