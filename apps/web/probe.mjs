import { chromium } from 'playwright-core';
import { createServer } from 'node:http';
import { readFileSync, mkdtempSync, existsSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
if (!existsSync('/tmp/probe64.bin')) writeFileSync('/tmp/probe64.bin', randomBytes(64 << 20));
const DIST = '/work/main/apps/web/dist/';
const server = createServer((req, res) => {
  const p = new URL(req.url, 'http://x').pathname;
  const f = p === '/data' ? '/tmp/probe64.bin' : DIST + p.slice(1);
  let b; try { b = readFileSync(f); } catch { return res.writeHead(404).end(); }
  res.writeHead(200, { 'content-type': f.endsWith('.js') ? 'text/javascript' : f.endsWith('.wasm') ? 'application/wasm' : f.endsWith('.html') ? 'text/html' : 'application/octet-stream' }).end(b);
}).listen(8798, '127.0.0.1');
const browser = await chromium.launchPersistentContext(mkdtempSync('/tmp/kura-prof-'), { executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] });
const page = await browser.newPage();
await page.goto('http://127.0.0.1:8798/bench.html');
await page.waitForFunction(() => window.kuraBench);
await page.evaluate(() => window.kuraBench.ready());
for (let i = 0; i < 3; i++) { const r = await page.evaluate(() => window.kuraBench.ingest('/data')); console.log('store add', r.ms.toFixed(0), JSON.stringify(r.outcome.t)); }
await browser.close(); server.close();
