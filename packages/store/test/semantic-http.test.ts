/**
 * The OpenAI-compatible embedder (decision 0036) against a real HTTP endpoint on 127.0.0.1
 * serving the local model's vectors, and the same endpoint's faulty twin: overload and lost
 * connections are retried, wrong answers and refusals are MODEL_UNAVAILABLE with the reason,
 * the key never appears in an error.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMiniLm } from '../src/node/minilm-node.js';
import type { Embedder } from '../src/semantic/embedder.js';
import { loadHttpEmbedder } from '../src/semantic/http-embedder.js';
import { RETRIEVAL_SET } from './fixtures/retrieval-set.js';
import { startEmbeddingServer, type EmbeddingServer } from './helpers/embedding-server.js';
import { newStore } from './helpers/store.js';

const KEY = 'sk-test-0123456789abcdef';
const MODEL = 'all-minilm-on-http';
let local: Embedder;
let server: EmbeddingServer;

beforeAll(async () => {
  local = await loadMiniLm();
  server = await startEmbeddingServer(local, { model: MODEL, key: KEY });
}, 60_000);
afterAll(async () => {
  await server?.close();
  await local?.close();
});

const options = (more: object = {}) => ({ url: server.url, model: MODEL, apiKey: KEY, retries: 2, timeoutMs: 5_000, ...more });

describe('an OpenAI-compatible embedding endpoint', () => {
  it('gives the endpoint\'s vectors, in order, normalised; learns the dimensions; sends the key and the model', async () => {
    const e = await loadHttpEmbedder(options());
    expect(e.dims).toBe(384);
    expect(e.model).toBe(`openai-compatible:${MODEL}:384`);
    const texts = ['Felines need fresh water daily.', 'Motor lubricant should be replaced.', 'A third text'];
    const got = await e.embed(texts);
    const want = await local.embed(texts);
    got.forEach((v, i) => v.forEach((x, d) => expect(Math.abs(x - want[i]![d]!)).toBeLessThan(1e-6))); // the server sent them reversed
    const last = server.requests.at(-1)!;
    expect(last.authorization).toBe(`Bearer ${KEY}`);
    expect(last.body).toEqual({ model: MODEL, input: texts });
  });

  it('answers the labelled questions by meaning through a store', { timeout: 120_000 }, async () => {
    const { store } = await newStore();
    for (const d of RETRIEVAL_SET) await store.put(new TextEncoder().encode(d.text), { path: d.path });
    store.useEmbedder(await loadHttpEmbedder(options()));
    let first = 0;
    for (const d of RETRIEVAL_SET) if ((await store.search(d.meaning, { mode: 'semantic', limit: 3 }))[0]?.path === d.path) first++;
    expect(first).toBeGreaterThanOrEqual(8);
    expect((await store.indexStatus()).embedding).toMatchObject({ model: `openai-compatible:${MODEL}:384`, documents: RETRIEVAL_SET.length, pending: 0 });
    await store.close();
  });

  it('retries overload (429, 503 with Retry-After) and a lost connection, then answers', async () => {
    const e = await loadHttpEmbedder(options({ retries: 3 }));
    const before = server.requests.length;
    server.faults.push({ status: 429, retryAfter: 0 }, { status: 503 }, 'reset');
    const [v] = await e.embed(['after three failures']);
    expect(v!.length).toBe(384);
    expect(server.requests.length - before).toBe(4);
  });

  it('gives up after its retries: MODEL_UNAVAILABLE naming the endpoint and the last failure', async () => {
    const e = await loadHttpEmbedder(options({ retries: 1 }));
    server.faults.push({ status: 500, error: 'the GPU is on fire' }, { status: 502, error: 'bad gateway' });
    await expect(e.embed(['x'])).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE', message: expect.stringMatching(/failed 2 times: HTTP 502: bad gateway/) });
    const slow = await loadHttpEmbedder(options({ retries: 0, timeoutMs: 300 }));
    server.faults.push('hang');
    await expect(slow.embed(['x'])).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE', message: expect.stringMatching(/no answer in time/) });
  });

  it('refuses wrong answers: too few vectors, other dimensions, numbers that are not finite, not JSON', async () => {
    const e = await loadHttpEmbedder(options());
    for (const [fault, why] of [
      ['wrong-count', /answered wrongly: 1 vectors for 2 texts/],
      ['wrong-dims', /answered wrongly: a vector of 383 dimensions, not 384/],
      ['infinite', /answered wrongly: /], // 1e999: Infinity once parsed
      ['not-json', /not JSON: "<html>gateway<\/html>"/],
    ] as const) {
      server.faults.push(fault);
      await expect(e.embed(['one', 'two'])).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE', message: expect.stringMatching(why) });
    }
  });

  it('a refusal is MODEL_UNAVAILABLE at once, with the endpoint\'s reason and never the key', async () => {
    const wrongKey = 'sk-wrong-key-never-shown';
    const bad = await loadHttpEmbedder(options({ apiKey: wrongKey })).catch((e: Error & { code?: string }) => e);
    expect(bad).toMatchObject({ code: 'MODEL_UNAVAILABLE', message: expect.stringMatching(/refused: HTTP 401: Incorrect API key provided/) });
    expect((bad as Error).message).not.toContain(wrongKey);
    await expect(loadHttpEmbedder(options({ model: 'no-such-model' }))).rejects.toMatchObject({ message: expect.stringMatching(/HTTP 404: The model `no-such-model` does not exist/) });
    const secretUrl = server.url.replace('http://', 'http://user:hunter2@');
    const viaUrl = await loadHttpEmbedder(options({ url: secretUrl })).catch((e: Error) => e);
    expect(viaUrl).toMatchObject({ code: 'MODEL_UNAVAILABLE', message: expect.stringMatching(/carries credentials/) });
    expect((viaUrl as Error).message).not.toContain('hunter2');
    await expect(loadHttpEmbedder(options({ url: 'ftp://example.invalid' }))).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE', message: expect.stringMatching(/not an http\(s\) URL/) });
  });

  it('an endpoint that does not answer: MODEL_UNAVAILABLE after its retries', async () => {
    const gone = await startEmbeddingServer(local, { model: MODEL });
    const url = gone.url;
    await gone.close();
    await expect(loadHttpEmbedder({ url, model: MODEL, retries: 1 })).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE', message: expect.stringMatching(/failed 2 times: ECONNREFUSED/) });
  });
});
