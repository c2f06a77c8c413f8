/**
 * SHA-256 and BLAKE3: Kura's wasm against what an npm user would otherwise install, plus
 * node:crypto (native, SHA-NI on this CPU) as the ceiling a wasm SHA-256 cannot reach.
 * Every peer's digest is checked against Kura's before it is timed.
 */
import { createHash } from 'node:crypto';
import { Blake3, Sha256, blake3 as kuraBlake3, sha256 as kuraSha256 } from '@kura/core';
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

/** Piece size of the streaming figures: what a 64 KiB read from a file or socket hands over. */
export const PIECE = 64 * 1024;

/** Feeds `data` to `update` in PIECE-sized views (no copies), as a stream would. */
function inPieces(data, update) {
  for (let at = 0; at < data.length; at += PIECE) update(data.subarray(at, at + PIECE));
}

/**
 * Incremental hashers fed the same bytes in PIECE pieces, each peer as its own docs say to
 * stream; 'kura one-shot' is the same input in one call, so the kura/peer column of that row
 * is the cost of streaming.
 */
async function streamingPeers(name) {
  const hashWasm = (create) => async () => {
    const h = await (await import('hash-wasm'))[create]();
    return streamed(() => h.init(), (x) => x.digest('binary')); // one hasher, re-initialized
  };
  if (name === 'sha256') {
    return Promise.all([
      loadPeer('kura one-shot', () => kuraSha256),
      loadPeer('node:crypto', () => streamed(() => createHash('sha256'))),
      loadPeer('hash-wasm', hashWasm('createSHA256')),
      loadPeer('noble', async () => {
        const { sha256 } = await import('@noble/hashes/sha2.js');
        return streamed(() => sha256.create());
      }),
    ]);
  }
  return Promise.all([
    loadPeer('kura one-shot', () => kuraBlake3),
    loadPeer('hash-wasm', hashWasm('createBLAKE3')),
    loadPeer('blake3-wasm', async () => {
      const m = await import('blake3-wasm');
      return streamed(m.createHash ?? m.default.createHash);
    }),
    loadPeer('noble', async () => {
      const { blake3 } = await import('@noble/hashes/blake3.js');
      return streamed(() => blake3.create());
    }),
  ]);
}

/** A digest function: a hasher from `start`, fed the input in PIECE pieces, then `finish`. */
function streamed(start, finish = (h) => h.digest()) {
  return (d) => {
    const h = start();
    inPieces(d, (p) => h.update(p));
    return finish(h);
  };
}

const KURA_STREAMING = {
  sha256: streamed(() => new Sha256()),
  blake3: streamed(() => new Blake3()),
};

/** Family `hash-stream`: streamed in PIECE pieces vs one-shot, at each of `sizes`. */
export async function runStreaming(sizes) {
  const results = [];
  for (const name of ['sha256', 'blake3']) {
    const check = randomBytes(3 * PIECE + 1234, 98); // pieces and a ragged tail
    const expected = hex(KURA_STREAMING[name](check));
    // Kura's streamed digest must be its one-shot digest (which runHashes checks against every
    // peer) and, for SHA-256, node:crypto's: a wrong Kura hasher stops the run.
    const oneShot = hex(name === 'sha256' ? kuraSha256(check) : kuraBlake3(check));
    const native = name === 'sha256' ? createHash('sha256').update(check).digest('hex') : oneShot;
    if (expected !== oneShot || expected !== native) throw new Error(`kura ${name} streamed ${expected}, one-shot ${oneShot}, node:crypto ${native}`);
    const peers = await checkDigests(await streamingPeers(name), check, expected);
    for (const size of sizes) {
      const data = randomBytes(size, size + 5);
      const meta = { family: 'hash-stream', group: `${name} streamed in ${sizeLabel(PIECE)} pieces`, size };
      results.push(await measure(`${name} streaming kura ${sizeLabel(size)}`, () => KURA_STREAMING[name](data), size, { ...meta, impl: 'kura' }));
      for (const p of peers) {
        if (p.error) {
          results.push(unavailable({ ...meta, impl: p.impl }, p.error));
          continue;
        }
        results.push(await measure(`${name} streaming ${p.impl} ${sizeLabel(size)}`, () => p.fn(data), size, { ...meta, impl: p.impl, peer: true }));
      }
    }
  }
  return results;
}

export async function runHashes(sizes) {
  const sha = await family('sha256', kuraSha256, await sha256Peers(), sizes);
  const b3 = await family('blake3', kuraBlake3, await blake3Peers(), sizes);
  return [...sha, ...b3];
}
