/**
 * The browser build in a real browser: Debian's Chromium driven by playwright-core (never a
 * browser download), loading dist/browser.js over HTTP from 127.0.0.1. Checks the same known
 * answers as the Node tests.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coreVector, sharedVector } from './helpers/data.js';
import { launchChromium } from './helpers/chromium.js';

const here = (rel: string) => fileURLToPath(new URL(rel, import.meta.url));
const ROUTES: [prefix: string, dir: string][] = [
  ['/core/', here('../')],
  ['/vectors/', here('../../../../shared/test-vectors/')],
  ['/core-vectors/', here('../../../wasm-core/tests/vectors/')],
];
const TYPES: Record<string, string> = { '.json': 'application/json', '.js': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html', '.jpg': 'image/jpeg' };

let server: Server;
let browser: Browser;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    if (url.pathname === '/') {
      res.writeHead(200, { 'content-type': 'text/html' }).end(readFileSync(here('./browser/page.html')));
      return;
    }
    const route = ROUTES.find(([p]) => url.pathname.startsWith(p));
    const rel = route && url.pathname.slice(route[0].length);
    if (!route || !rel || rel.includes('..')) {
      res.writeHead(404).end();
      return;
    }
    try {
      const body = readFileSync(route[1] + rel);
      res.writeHead(200, { 'content-type': TYPES[rel.slice(rel.lastIndexOf('.'))] ?? 'application/octet-stream' }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await new Promise((r) => server?.close(r));
});

describe('@kura/core in Chromium', () => {
  it('loads the wasm with SIMD and reproduces the known answers', async () => {
    const page = await browser.newPage();
    await page.goto(base);
    await page.waitForFunction(() => (window as unknown as { results?: unknown }).results !== undefined, null, { timeout: 30_000 });
    const r = await page.evaluate(() => (window as unknown as { results: Record<string, unknown> }).results);
    expect(r.failed).toBeUndefined();
    expect(r.simd).toBe(true);
    expect(r.sha256).toBe('sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(r.blake3).toBe('af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262');
    expect(r.image).toBe('sha256:d9e749d9367fc908876749d6502eb212fee88c9a94892fb07da5ef3ba8bc39ed');
    const cases = sharedVector('fastcdc2020.json').cases;
    expect(r.lengths).toEqual(cases.find((c: { seed: number }) => c.seed === 0).chunks.map((c: { length: number }) => c.length));
    expect(r.seeded).toEqual(cases.find((c: { seed: number }) => c.seed === 666).chunks.map((c: { length: number }) => c.length));
    expect(r.roundTrip).toBe(true);
    const streamed = r.streamed as { digest: string; chunks: number[][] };
    expect(streamed.digest).toBe(r.image); // the wasm SHA-256 path (no node:crypto in a browser)
    expect(streamed.chunks.map((c) => c[1])).toEqual(r.lengths);
    expect(r.error).toEqual(['InvalidInputError', 'INVALID_INPUT']);
    // Encryption's known answers, computed in the page (test/crypto.test.ts checks Node's).
    const crypto = r.crypto as { wycheproof: Record<string, { sealed: string; opened: string }>; argon2id: string[]; blake3: string[][] };
    let checked = 0;
    for (const group of coreVector('wycheproof-xchacha20-poly1305.json').testGroups) {
      if (group.ivSize !== 192) continue;
      for (const t of group.tests) {
        const got = crypto.wycheproof[t.tcId]!;
        if (t.result === 'valid') expect(got, `tc ${t.tcId}`).toEqual({ sealed: t.iv + t.ct + t.tag, opened: t.msg });
        else expect(got.opened, `tc ${t.tcId}`).toBe('CORRUPT_DATA');
        checked++;
      }
    }
    expect(checked).toBe(306);
    const argon = coreVector('argon2id.json');
    expect(crypto.argon2id).toEqual([argon.rfc9106.tag, ...argon.cases.map((c: { tag: string }) => c.tag)]);
    expect(crypto.blake3).toEqual(coreVector('blake3-keyed.json').cases.map((c: { keyed_hash: string; derive_key: string }) => [c.keyed_hash, c.derive_key]));
    await page.close();
  });
});
