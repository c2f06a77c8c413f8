/**
 * The `browser` suite: ingest into the browser store (apps/web, Debian's Chromium driven by
 * playwright-core, store in OPFS) against Node's store on the same bytes in the same run.
 * Data: 64 MiB of random bytes, 64 MiB of text-like bytes, and 1,000 small files (1-4 KiB of
 * text). Browser: the page's store worker adds Files (File -> stream -> fused kernel -> OPFS
 * packs + SQLite commit), timed around the add. Node, the same operation: `store.putFiles` of
 * the same files on disk (what `kura add` does); with --full also, for the large ones,
 * `store.put(buffer)` from memory (no file reading at all: an upper bound). Fresh store each run.
 * The targets compare the browser with Node's putFiles.
 * With the local model installed, embedding too: the same texts embedded one at a time by the
 * page's store worker (onnxruntime-web on the demo's embedding worker; the server here serves
 * the model's files as `kura serve` does) and by Node's (onnxruntime-node on a worker thread).
 * Quick: one run of each; --full: best of 4.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MINILM, MODEL_PATH, Store, defaultModelDir, loadMiniLmOnWorker } from '@kura/store';
import { randomBytes, textLike, MiB } from '../lib/data.mjs';
import { fmt, target } from '../lib/report.mjs';

const log = (msg) => process.stderr.write(`[browser] ${msg}\n`);
const DIST = fileURLToPath(new URL('../../apps/web/dist/', import.meta.url));
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm' };

function row(group, impl, bytes, files, seconds, extra = {}) {
  const ms = seconds * 1000;
  return {
    family: 'browser', group, impl, name: `${group} ${impl}`, size: bytes, bytes, files,
    opsPerSec: files / seconds, filesPerSec: files / seconds, mbPerSec: bytes / 1e6 / seconds,
    mean: ms, p50: ms, p95: ms, p99: ms, min: ms, max: ms, samples: 1, ...extra,
  };
}

/** Serves the built demo and the benchmark's data files on 127.0.0.1. */
async function serve(dataDir) {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const model = path.startsWith(MODEL_PATH) && path.slice(MODEL_PATH.length) in MINILM.files;
    const [base, rel] = model ? [defaultModelDir(), path.slice(MODEL_PATH.length)] : path.startsWith('/data/') ? [dataDir, path.slice(6)] : [DIST, path.slice(1) || 'index.html'];
    const file = normalize(join(base, rel));
    if (!file.startsWith(base)) return res.writeHead(404).end();
    try {
      const body = readFileSync(file);
      res.writeHead(200, { 'content-type': TYPES[file.slice(file.lastIndexOf('.'))] ?? 'application/octet-stream' }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${server.address().port}` };
}

async function best(runs, fn) {
  let b = Infinity;
  for (let i = 0; i < runs; i++) b = Math.min(b, await fn());
  return b;
}

export async function run({ full = false } = {}) {
  let chromium;
  try {
    ({ chromium } = await import('playwright-core'));
    readFileSync(join(DIST, 'bench.html'));
    readFileSync('/usr/bin/chromium');
  } catch (e) {
    return [{ family: 'browser', group: 'ingest', impl: 'browser', unavailable: `needs apps/web/dist (scripts/build.sh) and /usr/bin/chromium: ${e.message}` }];
  }
  const runs = full ? 4 : 1; // quick: one run each, to keep `pnpm bench` within its budget
  // The small files' row takes ~0.5 s a run, and one run moves ±25% from the next: best of 3.
  const smallRuns = full ? 4 : 3;
  const root = mkdtempSync(join(tmpdir(), 'kura-bench-browser-'));
  const dataDir = join(root, 'data');
  mkdirSync(dataDir);
  const sets = [
    { group: 'ingest 64 MiB random', file: 'random.bin', bytes: randomBytes(64 * MiB, 11) },
    { group: 'ingest 64 MiB text-like', file: 'text.bin', bytes: textLike(64 * MiB, 12) },
  ];
  const small = textLike(1000 * 4096, 13, 2048);
  const sizes = Array.from({ length: 1000 }, (_, i) => 1024 + ((i * 2654435761) % 3072));
  const smallBytes = sizes.reduce((n, s) => n + s, 0);
  for (const s of sets) writeFileSync(join(dataDir, s.file), s.bytes);
  writeFileSync(join(dataDir, 'small.bin'), small.subarray(0, smallBytes));
  const smallDir = join(root, 'small');
  mkdirSync(smallDir);
  let at = 0;
  const smallFiles = sizes.map((size, i) => {
    const p = join(smallDir, `f${i}.txt`);
    writeFileSync(p, small.subarray(at, at + size));
    at += size;
    return { path: p };
  });

  const { server, url } = await serve(dataDir);
  // A persistent profile, as a person's browser has: an incognito context (browser.newPage())
  // keeps OPFS in memory behind IPC, where each sync-handle read or write costs ~0.7 ms.
  const browser = await chromium.launchPersistentContext(join(root, 'profile'), {
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const rows = [];
  try {
    const page = await browser.newPage();
    await page.goto(`${url}/bench.html`);
    await page.waitForFunction(() => window.kuraBench !== undefined);
    await page.evaluate(() => window.kuraBench.ready());
    const browserIngest = (dataUrl, cut, n = runs) =>
      best(n, async () => {
        const r = await page.evaluate(([u, c]) => window.kuraBench.ingest(u, c), [dataUrl, cut]);
        if (r.outcome.failed) throw new Error(`browser ingest: ${r.outcome.failed} files failed`);
        return r.ms / 1000;
      });
    const nodeIngest = (fn, n = runs) =>
      best(n, async () => {
        const dir = mkdtempSync(join(root, 'store-'));
        const store = await Store.init(join(dir, 's'));
        const t = performance.now();
        await fn(store);
        const seconds = (performance.now() - t) / 1000;
        await store.close();
        rmSync(dir, { recursive: true, force: true });
        return seconds;
      });

    for (const s of sets) {
      const b = await browserIngest(`${url}/data/${s.file}`);
      const n = await nodeIngest(async (store) => {
        for await (const o of store.putFiles([{ path: join(dataDir, s.file) }])) if (o.error) throw o.error;
      });
      rows.push(row(s.group, 'kura browser (Chromium, OPFS)', s.bytes.length, 1, b));
      rows.push(row(s.group, 'kura node (putFiles)', s.bytes.length, 1, n));
      const mbs = (x) => (s.bytes.length / 1e6 / x).toFixed(0);
      log(`${s.group}: browser ${mbs(b)} MB/s, node putFiles ${mbs(n)} MB/s`);
      if (full) {
        // From memory, no file reading at all: an upper bound for Node (--full only: time).
        const m = await nodeIngest((store) => store.put(s.bytes));
        rows.push(row(s.group, 'kura node (put buffer)', s.bytes.length, 1, m));
        log(`${s.group}: node put(buffer) ${mbs(m)} MB/s`);
      }
    }
    const group = 'ingest 1,000 small files';
    const b = await browserIngest(`${url}/data/small.bin`, sizes, smallRuns);
    const n = await nodeIngest(async (store) => {
      for await (const o of store.putFiles(smallFiles)) if (o.error) throw o.error;
    }, smallRuns);
    rows.push(row(group, 'kura browser (Chromium, OPFS)', smallBytes, 1000, b));
    rows.push(row(group, 'kura node (putFiles)', smallBytes, 1000, n));
    log(`${group}: browser ${(1000 / b).toFixed(0)} files/s, node ${(1000 / n).toFixed(0)} files/s`);
    rows.push(...(await embedding(page)));
  } finally {
    await browser.close();
    server.close();
    rmSync(root, { recursive: true, force: true });
  }
  return rows;
}

/** The labelled set's texts, five times over (~130 tokens): what the search suite's Node figure embeds. */
const TEXTS = JSON.parse(readFileSync(new URL('../../packages/store/test/fixtures/retrieval-set.json', import.meta.url), 'utf8')).map((d) => `${d.text} `.repeat(5));
const EMBEDS = 40;

/** Texts embedded per second, one at a time, by the page's store worker and by Node's, same run. */
async function embedding(page) {
  const texts = Array.from({ length: EMBEDS }, (_, i) => TEXTS[i % TEXTS.length]);
  let node;
  try {
    node = await loadMiniLmOnWorker();
  } catch (e) {
    return [{ family: 'embedding', group: 'embedding', impl: 'kura browser', unavailable: `no model (${e.message})` }];
  }
  try {
    const b = await page.evaluate((t) => window.kuraBench.embed(t), texts);
    await node.embed(texts.slice(0, 2)); // warm, as the page's is
    const started = performance.now();
    for (const t of texts) await node.embed([t]);
    const n = performance.now() - started;
    const group = `embedding texts of ~${Math.round(b.tokens)} tokens, one at a time`;
    log(`${group}: browser ${((EMBEDS * 1000) / b.ms).toFixed(1)}/s, node ${((EMBEDS * 1000) / n).toFixed(1)}/s`);
    return [
      { ...row(group, 'kura browser (onnxruntime-web, 1 thread)', 0, EMBEDS, b.ms / 1000), family: 'embedding' },
      { ...row(group, 'kura node (onnxruntime-node, 1 thread)', 0, EMBEDS, n / 1000), family: 'embedding' },
    ];
  } finally {
    await node.close();
  }
}

export const families = {
  embedding: {
    title: 'embedding with the local model (all-MiniLM-L6-v2 int8) in the browser store worker and in Node, same texts, same run; ratio = browser / node',
    ratio: (r, all) => {
      if (!r.impl.startsWith('kura browser')) return undefined;
      const n = all.find((x) => x.group === r.group && x.impl.startsWith('kura node'));
      return n ? r.opsPerSec / n.opsPerSec : undefined;
    },
    extra: [{ header: 'texts/s', value: (r) => r.opsPerSec.toFixed(1) }],
  },
  browser: {
    title: 'adding files: browser store (Chromium, OPFS, ingest workers) vs Node store on the same files; ratio = browser / node putFiles MB/s',
    ratio: (r, all) => {
      if (!r.impl.startsWith('kura browser')) return undefined;
      const n = all.find((x) => x.group === r.group && x.impl === 'kura node (putFiles)');
      return n ? r.mbPerSec / n.mbPerSec : undefined;
    },
    extra: [{ header: 'files/s', value: (r) => (r.files > 1 ? fmt.ops(r.filesPerSec) : '') }],
  },
};

export function targets(rows) {
  return ['ingest 64 MiB random', 'ingest 64 MiB text-like', 'ingest 1,000 small files'].map((group) => {
    const b = rows.find((r) => r.group === group && r.impl?.startsWith('kura browser') && !r.unavailable);
    const n = rows.find((r) => r.group === group && r.impl === 'kura node (putFiles)');
    const ratio = b && n ? b.mbPerSec / n.mbPerSec : undefined;
    return target(`browser ingest >= 0.6x Node putFiles (${group.replace('ingest ', '')})`, ratio, 0.6, {
      detail: b && n ? `browser ${b.mbPerSec.toFixed(1)} / node ${n.mbPerSec.toFixed(1)} MB/s` : '',
      missing: 'browser not measured',
    });
  });
}


