/**
 * Optional reranking (search/rerank.ts): against a real process serving the `/rerank` protocol
 * with the local model (fixtures/rerank-server.mjs) the order it gives is applied and each hit
 * says its rerank; against its faulty twin (an in-process server: a hang past the budget, 429,
 * 500, too few scores, repeated indexes, not JSON) the fused order is kept and the answer says
 * why — never an error, never a wait past `rerankMs`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpReranker, configuredReranker } from '../src/search/rerank.js';
import { newStore } from './helpers/store.js';

const text = (t: string) => new TextEncoder().encode(t);
const SERVER = fileURLToPath(new URL('./fixtures/rerank-server.mjs', import.meta.url));

let child: ChildProcess;
let url: string;

beforeAll(async () => {
  child = spawn(process.execPath, [SERVER, '--key', 'rk-test'], { stdio: ['pipe', 'pipe', 'inherit'] });
  url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`the rerank server ended (${code})`)));
  });
}, 60_000);
afterAll(() => {
  child?.stdin?.end();
  child?.kill();
});

/** A store whose keyword order puts the real answer last: three notes share the words, one means them. */
async function storeOf() {
  const { store } = await newStore();
  await store.put(text('Oil oil oil: the word oil, oil again, and a change of scenery.'), { path: 'a-noise.txt' });
  await store.put(text('An oil painting of a change in the weather.'), { path: 'b-painting.txt' });
  await store.put(text('Change the engine oil every 8,000 kilometres; check the dipstick monthly.'), { path: 'c-engine.txt' });
  return store;
}

type Fault = 'hang' | 429 | 500 | 'few' | 'repeat' | 'not-json' | 'bare-array';

/** The faulty twin: answers each request with the next fault queued (bare-array is TEI's correct shape). */
async function faultyTwin(faults: Fault[]): Promise<{ url: string; server: Server }> {
  const server = createServer(async (req, res) => {
    const parts: Buffer[] = [];
    for await (const p of req) parts.push(p as Buffer);
    const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { documents: string[] };
    const n = body.documents.length;
    const fault = faults.shift();
    const json = (status: number, value: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    if (fault === 'hang') return; // never answers
    if (fault === 429 || fault === 500) return json(fault, { error: 'busy' });
    if (fault === 'few') return json(200, { results: [{ index: 0, relevance_score: 1 }] });
    if (fault === 'repeat') return json(200, { results: Array.from({ length: n }, () => ({ index: 0, relevance_score: 1 })) });
    if (fault === 'not-json') return void res.writeHead(200).end('<html>');
    // Reversed order, TEI's bare array: the last candidate first.
    json(200, Array.from({ length: n }, (_, i) => ({ index: i, score: i })));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, server };
}

describe('reranking', () => {
  it('applies the order a real /rerank server gives, within the budget; each hit says its rerank', { timeout: 60_000 }, async () => {
    const store = await storeOf();
    const fused = await store.search('how frequently to replace motor oil', { mode: 'keyword' });
    expect(fused.map((h) => h.path)[0]).not.toBe('c-engine.txt');
    store.useReranker(new HttpReranker({ url, model: 'all-MiniLM-L6-v2', apiKey: 'rk-test' }));
    const hits = await store.search('how frequently to replace motor oil', { mode: 'keyword' });
    expect(hits.reranked).toMatchObject({ model: 'all-MiniLM-L6-v2', applied: true, candidates: 3 });
    expect(hits[0]).toMatchObject({ path: 'c-engine.txt', rerank: { rank: 1 }, keyword: { rank: expect.any(Number) } });
    expect(hits.map((h) => h.rerank!.rank)).toEqual([1, 2, 3]);
    // Off per query; and a wrong key is a refusal: the fused order, said.
    expect((await store.search('engine oil change', { mode: 'keyword', rerank: false })).reranked).toBeUndefined();
    store.useReranker(new HttpReranker({ url, model: 'all-MiniLM-L6-v2', apiKey: 'wrong' }));
    const refused = await store.search('how frequently to replace motor oil', { mode: 'keyword' });
    expect(refused.map((h) => h.path)).toEqual(fused.map((h) => h.path));
    expect(refused.reranked).toMatchObject({ applied: false, reason: expect.stringMatching(/HTTP 401/) });
  });

  it('keeps the fused order and says why on every fault, and never waits past rerankMs', { timeout: 60_000 }, async () => {
    const store = await storeOf();
    const fused = (await store.search('change oil', { mode: 'keyword' })).map((h) => h.path);
    const faults: Fault[] = ['hang', 429, 500, 'few', 'repeat', 'not-json', 'bare-array'];
    const twin = await faultyTwin(faults);
    try {
      store.useReranker(new HttpReranker({ url: twin.url, model: 'm' }));
      const reasons: string[] = [];
      for (const expected of [/no answer in time/, /HTTP 429/, /HTTP 500/, /1 scores for 3/, /indexes/, /not JSON/]) {
        const started = performance.now();
        const hits = await store.search('change oil', { mode: 'keyword', rerankMs: 300 });
        expect(performance.now() - started).toBeLessThan(3_000);
        expect(hits.map((h) => h.path)).toEqual(fused);
        expect(hits.reranked).toMatchObject({ applied: false, reason: expect.stringMatching(expected) });
        expect(hits.every((h) => h.rerank === undefined)).toBe(true);
        reasons.push(hits.reranked!.reason!);
      }
      // TEI's bare array is an answer: applied (reversed, as the twin scores).
      const applied = await store.search('change oil', { mode: 'keyword', rerankMs: 300 });
      expect(applied.reranked).toMatchObject({ applied: true });
      expect(applied.map((h) => h.path)).toEqual([...fused].reverse());
      expect(reasons.join(' ')).not.toMatch(/rk-test/);
    } finally {
      twin.server.closeAllConnections();
      await new Promise((r) => twin.server.close(r));
    }
  });

  it('is configured by the environment, and off without it', () => {
    expect(configuredReranker({})).toBeUndefined();
    const r = configuredReranker({ KURA_RERANK_URL: 'http://127.0.0.1:1', KURA_RERANK_MODEL: 'bge-reranker-v2-m3', KURA_EMBED_API_KEY: 'k' });
    expect(r?.model).toBe('bge-reranker-v2-m3');
    expect(() => configuredReranker({ KURA_RERANK_URL: 'http://127.0.0.1:1' })).toThrow(/KURA_RERANK_MODEL/);
    expect(() => configuredReranker({ KURA_RERANK_URL: 'http://u:p@127.0.0.1:1', KURA_RERANK_MODEL: 'm' })).toThrow(/credentials/);
  });
});
