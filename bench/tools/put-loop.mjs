/**
 * N puts of 1 KB documents at 32 in flight into a new store, then close: the loop that
 * put-instructions.sh runs under cachegrind (run from bench/: `node tools/put-loop.mjs N`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Store } from '@kura/store';
import { documents } from '../lib/documents.mjs';

const N = Number(process.argv[2] ?? 2000);
const IN_FLIGHT = 32;
const docs = documents(N, 1024, 1024);
const root = mkdtempSync(join(tmpdir(), 'kura-put-loop-'));
const store = await Store.init(join(root, 's'));
let next = 0;
const t = performance.now();
await Promise.all(Array.from({ length: IN_FLIGHT }, async () => { for (let i = next++; i < N; i = next++) await store.put(docs[i]); }));
console.log(`${N} puts: ${Math.round(N / ((performance.now() - t) / 1000))}/s`);
await store.close();
rmSync(root, { recursive: true, force: true });
