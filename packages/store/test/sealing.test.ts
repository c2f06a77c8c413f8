/**
 * The sealed forms of FORMAT.md §17 (encryption/sealing.ts): each opens where it was sealed
 * and nowhere else — another pack, offset, seq, previous commit, block, store or key fails —
 * and nothing of the plaintext shows in the sealed bytes.
 */
import { blake3 as nobleBlake3 } from '@noble/hashes/blake3.js';
import { describe, expect, it } from 'vitest';
import { randomBytes, toHex } from '@kura/core';
import { CHECKPOINT_BLOCK, SEALED_RECORD_OVERHEAD, Sealing } from '../src/encryption/sealing.js';

const utf8 = (s: string) => new TextEncoder().encode(s);
const STORE = 'aa'.repeat(16);
const PACK = '0123456789abcdef0123456789abcdef';
const unauthentic = { code: 'CORRUPT_DATA', reason: 'unauthentic' };
const contains = (hay: Uint8Array, needle: Uint8Array) => Buffer.from(hay).includes(Buffer.from(needle));

describe('Sealing', () => {
  const master = randomBytes(32);
  const s = new Sealing(master, STORE);

  it('names chunks by BLAKE3 keyed under a key of their own, not plain BLAKE3 and not the master key', () => {
    const raw = utf8('a chunk of text');
    const name = s.chunkName(raw);
    expect(name).toBe(toHex(nobleBlake3(raw, { key: s.chunkNameKey })));
    expect(name).not.toBe(toHex(nobleBlake3(raw)));
    expect(name).not.toBe(toHex(nobleBlake3(raw, { key: master })));
    expect(new Sealing(randomBytes(32), STORE).chunkName(raw)).not.toBe(name);
  });

  it('seals a record to its pack and offset', () => {
    const header = utf8('KCHK header bytes: forty-eight of them in a rea');
    const payload = utf8('the marker word zanzibar, in a chunk payload');
    const sealed = s.sealRecord(PACK, 16, [header, payload]);
    expect(sealed.length).toBe(header.length + payload.length + SEALED_RECORD_OVERHEAD);
    expect(contains(sealed, utf8('zanzibar'))).toBe(false);
    expect(toHex(s.openRecord(PACK, 16, sealed))).toBe(toHex(Buffer.concat([header, payload])));
    expect(() => s.openRecord(PACK, 17, sealed)).toThrow(expect.objectContaining(unauthentic));
    expect(() => s.openRecord('f'.repeat(32), 16, sealed)).toThrow(expect.objectContaining(unauthentic));
    expect(() => new Sealing(randomBytes(32), STORE).openRecord(PACK, 16, sealed)).toThrow(expect.objectContaining(unauthentic));
    const flipped = sealed.slice();
    flipped[sealed.length - 20]! ^= 4;
    expect(() => s.openRecord(PACK, 16, flipped, 'ab'.repeat(32))).toThrow(expect.objectContaining({ ...unauthentic, key: 'ab'.repeat(32) }));
    expect(() => s.openRecord(PACK, 16, sealed.subarray(0, sealed.length - 1))).toThrow(expect.objectContaining({ code: 'CORRUPT_DATA', reason: 'pack-record' }));
    expect(() => s.openRecord(PACK, 16, utf8('KCHK and something else entirely, long enough'))).toThrow(expect.objectContaining({ reason: 'pack-record' }));
  });

  it("seals a pack's index to the pack, found from the pack's tail", () => {
    const index = utf8('KIDX ... the index of a pack ... KEND');
    const tail = Buffer.concat([randomBytes(100), s.sealIndex(PACK, index)]);
    expect(toHex(s.openIndex(PACK, tail)!)).toBe(toHex(index));
    expect(() => s.openIndex('e'.repeat(32), tail)).toThrow(expect.objectContaining(unauthentic));
    expect(s.openIndex(PACK, randomBytes(200))).toBeUndefined(); // no index: an open pack
    const lying = tail.slice();
    lying.writeUInt32LE(tail.length + 1, tail.length - 8);
    expect(() => s.openIndex(PACK, lying)).toThrow(expect.objectContaining({ reason: 'pack-index' }));
  });

  it("seals a commit's body to its seq and the commit before it: a replayed or reordered commit fails", () => {
    const prev = randomBytes(32);
    const body = utf8('{"w":"x","t":1,"ops":[{"op":"put","entry":{"path":"secret/plans.md"}}]}');
    const sealed = s.sealBody(7, prev, body);
    expect(contains(sealed, utf8('secret/plans'))).toBe(false);
    expect(new TextDecoder().decode(s.openBody(7, prev, sealed))).toContain('secret/plans.md');
    expect(() => s.openBody(8, prev, sealed)).toThrow(expect.objectContaining(unauthentic));
    expect(() => s.openBody(7, randomBytes(32), sealed)).toThrow(expect.objectContaining(unauthentic));
    expect(() => new Sealing(master, 'bb'.repeat(16)).openBody(7, prev, sealed)).toThrow(expect.objectContaining(unauthentic));
  });

  it('seals a checkpoint in blocks: cut, reordered, another seq or an empty one all fail', () => {
    const bytes = randomBytes(Math.floor(2.5 * CHECKPOINT_BLOCK));
    const sealed = s.sealCheckpoint(40, bytes);
    expect(toHex(s.openCheckpoint(40, sealed))).toBe(toHex(bytes));
    expect(() => s.openCheckpoint(41, sealed)).toThrow(expect.objectContaining(unauthentic));
    // Without its last block: the block before it was not sealed as the last.
    const block = CHECKPOINT_BLOCK + 40 + 4;
    expect(() => s.openCheckpoint(40, sealed.subarray(0, 8 + 2 * block))).toThrow(expect.objectContaining(unauthentic));
    expect(() => s.openCheckpoint(40, sealed.subarray(0, sealed.length - 1))).toThrow(expect.objectContaining({ reason: 'checkpoint' }));
    const swapped = Buffer.concat([sealed.subarray(0, 8), sealed.subarray(8 + block, 8 + 2 * block), sealed.subarray(8, 8 + block), sealed.subarray(8 + 2 * block)]);
    expect(() => s.openCheckpoint(40, swapped)).toThrow(expect.objectContaining(unauthentic));
    expect(s.openCheckpoint(3, s.sealCheckpoint(3, new Uint8Array(0)))).toHaveLength(0);
  });

  it('seals the configuration to its store', () => {
    const json = utf8('{"chunk_seed":"12345"}');
    const sealed = s.sealConfig(json);
    expect(new TextDecoder().decode(s.openConfig(sealed))).toBe('{"chunk_seed":"12345"}');
    expect(() => new Sealing(master, 'cc'.repeat(16)).openConfig(sealed)).toThrow(expect.objectContaining(unauthentic));
  });
});
