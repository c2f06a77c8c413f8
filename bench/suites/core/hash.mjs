/**
 * SHA-256 and BLAKE3: Kura's wasm against what an npm user would otherwise install, plus
 * node:crypto (native, SHA-NI on this CPU) as the ceiling a wasm SHA-256 cannot reach.
 * Every peer's digest is checked against Kura's before it is timed.
 */
import { createHash } from 'node:crypto';
import { blake3 as kuraBlake3, sha256 as kuraSha256 } from '@kura/core';
import { randomBytes, sizeLabel } from '../../lib/data.mjs';
import { measure, unavailable } from '../../lib/measure.mjs';
import { checkDigests, hex, loadPeer } from './peers.mjs';

async function sha256Peers() {
  return Promise.all([
    loadPeer('node:crypto', () => (d) => createHash('sha256').update(d).digest()),
    // hash-wasm's one-shot sha256() is async; its createSHA256() hasher is sync and reused,
    // which is how a performance-minded user calls it. Both are measured.
    loadPeer('hash-wasm', async () => {
      const { createSHA256 } = await import('hash-wasm');
      const h = await createSHA256();
      return (d) => h.init().update(d).digest('binary');
    }),
    loadPeer('hash-wasm sha256()', async () => {
      const { sha256 } = await import('hash-wasm');
      return Object.assign((d) => sha256(d), { async: true });
    }),
    loadPeer('noble', async () => (await import('@noble/hashes/sha2.js')).sha256),
  ]);
}

async function blake3Peers() {
  return Promise.all([
    loadPeer('hash-wasm', async () => {
      const { createBLAKE3 } = await import('hash-wasm');
      const h = await createBLAKE3();
      return (d) => h.init().update(d).digest('binary');
    }),
    loadPeer('blake3-jit', async () => (await import('blake3-jit')).hash),
    loadPeer('blake3-wasm', async () => {
      const m = await import('blake3-wasm'); // CommonJS; its Node build loads a wasm file
      const hash = m.hash ?? m.default.hash;
      return (d) => hash(d);
    }),
    loadPeer('noble', async () => (await import('@noble/hashes/blake3.js')).blake3),
  ]);
}

/** Peers that npm offers for BLAKE3 (the target compares Kura with the best of them). */
export const NPM_BLAKE3 = ['hash-wasm', 'blake3-jit', 'blake3-wasm', 'noble'];

async function family(name, kuraFn, peers, sizes) {
  const check = randomBytes(64 * 1024, 99);
  await checkDigests(peers, check, hex(kuraFn(check)));
  const results = [];
  for (const size of sizes) {
    const data = randomBytes(size, size);
    const meta = { family: name, group: name, size };
    results.push(await measure(`${name} kura ${sizeLabel(size)}`, () => kuraFn(data), size, { ...meta, impl: 'kura' }));
    for (const p of peers) {
      if (p.error) {
        results.push(unavailable({ ...meta, impl: p.impl }, p.error));
        continue;
      }
      results.push(await measure(`${name} ${p.impl} ${sizeLabel(size)}`, () => p.fn(data), size,
        { ...meta, impl: p.impl, peer: true, async: p.fn.async === true }));
    }
  }
  return results;
}

export async function runHashes(sizes) {
  const sha = await family('sha256', kuraSha256, await sha256Peers(), sizes);
  const b3 = await family('blake3', kuraBlake3, await blake3Peers(), sizes);
  return [...sha, ...b3];
}
