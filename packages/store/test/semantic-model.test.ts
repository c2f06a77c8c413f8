/**
 * The local embedding model (decision 0036): the reference similarities SEMANTIC.md gives
 * (checked there against an independent fp32 forward pass), files refused unless they have
 * their pinned hashes, padding that changes nothing, and the test-only hashing embedder
 * failing the meaning test the model passes.
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultModelDir, loadMiniLm } from '../src/node/minilm-node.js';
import { dot, type Embedder } from '../src/semantic/embedder.js';
import { HashingEmbedderForTests } from '../src/semantic/hashing-embedder.js';
import { MINILM } from '../src/semantic/minilm.js';
import { tempDir } from './helpers/store.js';

let model: Embedder;
beforeAll(async () => {
  model = await loadMiniLm(); // set-up fetched it (scripts/fetch-model.sh): missing is a failure here
}, 60_000);
afterAll(() => model?.close());

const similarity = async (e: Embedder, a: string, b: string) => {
  const [x, y] = await e.embed([a, b]);
  return dot(x!, y!);
};

describe('all-MiniLM-L6-v2 (int8) in Node', () => {
  it('gives the reference similarities (SEMANTIC.md) within 0.01', async () => {
    expect(Math.abs((await similarity(model, 'A man is eating food.', 'A man is eating a piece of bread.')) - 0.7553)).toBeLessThan(0.01);
    expect(Math.abs((await similarity(model, 'How do I reset my password?', 'Steps to recover a forgotten login credential')) - 0.571)).toBeLessThan(0.01);
    for (const [a, b] of [
      ['A man is eating food.', 'How do I reset my password?'],
      ['The stock market fell sharply today.', 'A cat sleeps on the warm windowsill.'],
    ]) {
      const s = await similarity(model, a!, b!);
      expect(s).toBeGreaterThan(-0.1);
      expect(s).toBeLessThan(0.1);
    }
  });

  it('gives unit vectors of 384 dimensions, the same for a text whatever it is embedded with; long texts are cut, not refused', async () => {
    const short = 'Otters hold hands while they sleep.';
    const long = 'The harbour master keeps a log of every vessel. '.repeat(20);
    const [alone] = await model.embed([short]);
    const [, batched] = await model.embed([long, short]); // batched, short would be padded and quantized with long
    expect(alone).toHaveLength(384);
    expect(dot(alone!, alone!)).toBeCloseTo(1, 5);
    expect(Array.from(batched!)).toEqual(Array.from(alone!));
    const huge = 'word '.repeat(5000);
    expect(model.countTokens(huge)).toBe(5000);
    const [cut] = await model.embed([huge]);
    expect(dot(cut!, cut!)).toBeCloseTo(1, 5);
  });

  it('refuses files without their pinned hashes, and missing files, as MODEL_UNAVAILABLE', async () => {
    const dir = join(tempDir(), 'model');
    mkdirSync(dir);
    for (const f of Object.keys(MINILM.files)) copyFileSync(join(defaultModelDir(), f), join(dir, f));
    writeFileSync(join(dir, 'tokenizer_config.json'), '{"do_lower_case": false}');
    await expect(loadMiniLm(dir)).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE', message: expect.stringMatching(/tokenizer_config\.json has sha256 .* not the pinned/) });
    await expect(loadMiniLm(join(dir, 'nowhere'))).rejects.toMatchObject({ code: 'MODEL_UNAVAILABLE', message: expect.stringMatching(/not in .*fetch-model\.sh/) });
  });
});

describe('the hashing embedder (tests only)', () => {
  it('matches words, not meaning: it fails the pair the model finds alike', async () => {
    const hashing = new HashingEmbedderForTests();
    expect(hashing.model).toMatch(/for-tests/);
    const q = 'How do I reset my password?';
    const a = 'Steps to recover a forgotten login credential';
    const [byHash, byModel] = [await similarity(hashing, q, a), await similarity(model, q, a)];
    expect(byModel).toBeGreaterThan(0.5);
    expect(byHash).toBeLessThan(byModel - 0.3); // no shared word: what it has is bucket collisions
    expect(await similarity(hashing, 'reset my password', 'password reset')).toBeGreaterThan(0.5); // shared words
  });
});
