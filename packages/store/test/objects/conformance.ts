/**
 * The ObjectStore contract (src/objects/object-store.ts) as tests, run against every
 * implementation: memory, a local directory, versitygw and MinIO (SCALEOUT.md's list: put,
 * get, ranges, head, 404s, conditional creates and their races, If-Match, multipart with a
 * conditional complete, listings paged with StartAfter, delete, create after delete).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listAll, MIN_PART_SIZE, type ObjectStore } from '../../src/objects/object-store.js';

export interface Subject {
  store: ObjectStore;
  /** Removes what the subject made (a server, a directory). */
  cleanup(): Promise<void>;
}

const text = (s: string) => new TextEncoder().encode(s);
const bytesOf = (n: number, seed = 1) => {
  const b = new Uint8Array(n);
  let x = seed * 2654435761;
  for (let i = 0; i < n; i++) {
    x = (x ^ (x << 13)) >>> 0;
    x = (x ^ (x >>> 17)) >>> 0;
    x = (x ^ (x << 5)) >>> 0;
    b[i] = x & 0xff;
  }
  return b;
};

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (e) {
    return (e as { code?: string }).code ?? String(e);
  }
}

export function objectStoreConformance(name: string, make: () => Promise<Subject>): void {
  describe(`ObjectStore conformance: ${name}`, () => {
    let subject: Subject;
    let s: ObjectStore;
    // Each test works under its own prefix: the subjects are shared within the file.
    let n = 0;
    const fresh = () => `t${++n}-${randomBytes(3).toString('hex')}`;

    beforeAll(async () => {
      subject = await make();
      s = subject.store;
    });
    afterAll(async () => {
      await s?.close();
      await subject?.cleanup();
    });

    it('puts, gets and heads an object; an absent key is NOT_FOUND to get and undefined to head', async () => {
      const k = `${fresh()}/a/b.bin`;
      const body = bytesOf(100_000);
      const etag = await s.put(k, body);
      expect(etag).toBeTruthy();
      expect(await s.get(k)).toEqual(body);
      const info = await s.head(k);
      expect(info).toMatchObject({ key: k, size: body.length, etag });
      expect(Math.abs(info!.modified - Date.now())).toBeLessThan(5 * 60_000);
      expect(await codeOf(s.get(`${k}.missing`))).toBe('NOT_FOUND');
      expect(await s.head(`${k}.missing`)).toBeUndefined();
    });

    it('holds an empty object and an 8 MiB one byte for byte', async () => {
      const p = fresh();
      await s.put(`${p}/empty`, new Uint8Array(0));
      expect(await s.get(`${p}/empty`)).toEqual(new Uint8Array(0));
      expect((await s.head(`${p}/empty`))?.size).toBe(0);
      const big = bytesOf(8 * 1024 * 1024 + 13, 7);
      await s.put(`${p}/big`, big);
      expect(Buffer.from(await s.get(`${p}/big`)).equals(Buffer.from(big))).toBe(true);
    });

    it('reads ranges: inside, up to the end, past the end (the bytes that exist), after the end (none)', async () => {
      const k = `${fresh()}/r`;
      const body = bytesOf(1000, 3);
      await s.put(k, body);
      expect(await s.get(k, { offset: 100, length: 50 })).toEqual(body.slice(100, 150));
      expect(await s.get(k, { offset: 0, length: 1 })).toEqual(body.slice(0, 1));
      expect(await s.get(k, { offset: 900, length: 100 })).toEqual(body.slice(900));
      expect(await s.get(k, { offset: 990, length: 100 })).toEqual(body.slice(990));
      expect(await s.get(k, { offset: 1000, length: 10 })).toEqual(new Uint8Array(0));
      expect(await s.get(k, { offset: 5000, length: 10 })).toEqual(new Uint8Array(0));
      expect(await codeOf(s.get(`${k}x`, { offset: 0, length: 10 }))).toBe('NOT_FOUND');
      expect(await codeOf(s.get(k, { offset: -1, length: 10 }))).toBe('INVALID_INPUT');
      expect(await codeOf(s.get(k, { offset: 0, length: 0 }))).toBe('INVALID_INPUT');
    });

    it('put replaces an object, and its etag changes even when the size does not', async () => {
      const k = `${fresh()}/p`;
      const e1 = await s.put(k, text('first'));
      const e2 = await s.put(k, text('again'));
      expect(e2).not.toBe(e1);
      expect(new TextDecoder().decode(await s.get(k))).toBe('again');
      expect((await s.head(k))?.etag).toBe(e2);
    });

    it('create: true on a free key, true again for the same bytes (a retried write), false for other bytes, which change nothing', async () => {
      const k = `${fresh()}/c`;
      expect(await s.create(k, text('mine'))).toBe(true);
      expect(await s.create(k, text('mine'))).toBe(true);
      expect(await s.create(k, text('theirs'))).toBe(false);
      expect(await s.create(k, text('min'))).toBe(false);
      expect(new TextDecoder().decode(await s.get(k))).toBe('mine');
    });

    it('create race: of 20 writers of different bytes exactly one wins, and the object is its bytes', async () => {
      for (let round = 0; round < 3; round++) {
        const k = `${fresh()}/race`;
        const bodies = Array.from({ length: 20 }, (_, i) => text(`writer ${i} of round ${round}`));
        const won = await Promise.all(bodies.map((b) => s.create(k, b)));
        expect(won.filter(Boolean)).toHaveLength(1);
        expect(await s.get(k)).toEqual(bodies[won.indexOf(true)]);
      }
    });

    it('delete: the object goes (head, get, list); deleting a free key is no error; create after delete writes the new bytes', async () => {
      const p = fresh();
      const k = `${p}/d`;
      await s.put(k, text('doomed'));
      await s.delete(k);
      expect(await s.head(k)).toBeUndefined();
      expect(await codeOf(s.get(k))).toBe('NOT_FOUND');
      expect((await s.list(`${p}/`)).objects).toEqual([]);
      await s.delete(k);
      await s.delete(`${p}/never`);
      expect(await s.create(k, text('reborn'))).toBe(true);
      expect(new TextDecoder().decode(await s.get(k))).toBe('reborn');
    });

    it('replace (If-Match): with the current etag it writes; with a stale one, or on a free key, it does not', async () => {
      const k = `${fresh()}/m`;
      const e1 = await s.put(k, text('v1'));
      const e2 = await s.replace(k, text('v2'), e1);
      expect(e2).toBeTruthy();
      expect(e2).not.toBe(e1);
      expect(await s.replace(k, text('v3'), e1)).toBeUndefined();
      expect(new TextDecoder().decode(await s.get(k))).toBe('v2');
      expect(await s.replace(`${k}.free`, text('x'), e1)).toBeUndefined();
      expect(await s.head(`${k}.free`)).toBeUndefined();
    });

    it('replace race: of 10 writers holding one etag exactly one wins', async () => {
      const k = `${fresh()}/mr`;
      const etag = await s.put(k, text('start'));
      const bodies = Array.from({ length: 10 }, (_, i) => text(`replacer ${i}`));
      const results = await Promise.all(bodies.map((b) => s.replace(k, b, etag)));
      const winners = results.filter((r) => r !== undefined);
      expect(winners).toHaveLength(1);
      expect(await s.get(k)).toEqual(bodies[results.findIndex((r) => r !== undefined)]);
    });

    it('lists by prefix in byte order, with sizes and etags, paged by limit and StartAfter', async () => {
      const p = fresh();
      const keys = Array.from({ length: 25 }, (_, i) => `${p}/log/${String(i * 7919 % 1000).padStart(20, '0')}`);
      await Promise.all(keys.map((k, i) => s.put(k, bytesOf(i + 1, i))));
      await s.put(`${p}/logs/other`, text('not under log/'));
      await s.put(`${p}/lo`, text('not under log/ either'));
      const sorted = [...keys].sort();
      const all = await s.list(`${p}/log/`);
      expect(all.objects.map((o) => o.key)).toEqual(sorted);
      expect(all.more).toBe(false);
      for (const o of all.objects) {
        const i = keys.indexOf(o.key);
        expect(o.size).toBe(i + 1);
        expect(o.etag).toBe((await s.head(o.key))!.etag);
      }
      const first = await s.list(`${p}/log/`, { limit: 7 });
      expect(first.objects.map((o) => o.key)).toEqual(sorted.slice(0, 7));
      expect(first.more).toBe(true);
      const next = await s.list(`${p}/log/`, { limit: 7, startAfter: sorted[6] });
      expect(next.objects.map((o) => o.key)).toEqual(sorted.slice(7, 14));
      const last = await s.list(`${p}/log/`, { limit: 7, startAfter: sorted[20] });
      expect(last.objects.map((o) => o.key)).toEqual(sorted.slice(21));
      expect(last.more).toBe(false);
      const after = await s.list(`${p}/log/`, { startAfter: sorted[24] });
      expect(after).toEqual({ objects: [], more: false });
      // A prefix part-way through a segment, and one under the whole tree.
      expect((await s.list(`${p}/log/0000000000000000000`)).objects.length).toBe(sum(keys.map((k) => (k.startsWith(`${p}/log/0000000000000000000`) ? 1 : 0))));
      expect((await s.list(`${p}/lo`)).objects.map((o) => o.key)).toEqual([`${p}/lo`, ...sorted, `${p}/logs/other`]);
      const paged: string[] = [];
      for await (const o of listAll(s, `${p}/`)) paged.push(o.key);
      expect(paged).toEqual([`${p}/lo`, ...sorted, `${p}/logs/other`]);
    });

    it('refuses keys outside the contract before any request: INVALID_INPUT', async () => {
      for (const bad of ['', '/a', 'a/', 'a//b', '../a', 'a/../b', '.hidden', 'a/.b', 'a b', 'ä', 'x'.repeat(1025)]) {
        expect(await codeOf(s.put(bad, text('x'))), bad).toBe('INVALID_INPUT');
        expect(await codeOf(s.get(bad)), bad).toBe('INVALID_INPUT');
        expect(await codeOf(s.create(bad, text('x'))), bad).toBe('INVALID_INPUT');
      }
      expect(await codeOf(s.list('../'))).toBe('INVALID_INPUT');
      expect(await codeOf(s.list('a', { limit: 0 }))).toBe('INVALID_INPUT');
      expect(await codeOf(s.list('a', { limit: 1001 }))).toBe('INVALID_INPUT');
    });

    it('multipart: parts make the object in order; a conditional complete on a free key writes it', async () => {
      const k = `${fresh()}/mp`;
      const a = bytesOf(MIN_PART_SIZE, 11);
      const b = bytesOf(12345, 12);
      const id = await s.startUpload(k);
      // Uploaded out of order: the part numbers decide.
      const eb = await s.uploadPart(k, id, 2, b);
      const ea = await s.uploadPart(k, id, 1, a);
      const etag = await s.completeUpload(k, id, [{ partNumber: 1, etag: ea }, { partNumber: 2, etag: eb }], { ifAbsent: true });
      expect(etag).toBeTruthy();
      const got = await s.get(k);
      expect(got.length).toBe(a.length + b.length);
      expect(Buffer.from(got.subarray(0, a.length)).equals(Buffer.from(a))).toBe(true);
      expect(Buffer.from(got.subarray(a.length)).equals(Buffer.from(b))).toBe(true);
      expect((await s.head(k))?.etag).toBe(etag);
      expect((await s.get(k, { offset: a.length - 2, length: 4 }))).toEqual(new Uint8Array([...a.subarray(-2), ...b.subarray(0, 2)]));
    });

    it('multipart: a conditional complete on a key holding other bytes writes nothing; without the condition it replaces', async () => {
      const k = `${fresh()}/mpc`;
      await s.put(k, text('already here'));
      const id = await s.startUpload(k);
      const e1 = await s.uploadPart(k, id, 1, text('a single small part'));
      expect(await s.completeUpload(k, id, [{ partNumber: 1, etag: e1 }], { ifAbsent: true })).toBeUndefined();
      expect(new TextDecoder().decode(await s.get(k))).toBe('already here');
      await s.abortUpload(k, id); // (gone already, or now)
      const id2 = await s.startUpload(k);
      const e2 = await s.uploadPart(k, id2, 1, text('replaced by parts'));
      expect(await s.completeUpload(k, id2, [{ partNumber: 1, etag: e2 }])).toBeTruthy();
      expect(new TextDecoder().decode(await s.get(k))).toBe('replaced by parts');
    });

    it('multipart: an aborted upload leaves no object and takes no more parts; a part below 5 MiB before the last is refused', async () => {
      const k = `${fresh()}/mpa`;
      const id = await s.startUpload(k);
      await s.uploadPart(k, id, 1, text('part'));
      await s.abortUpload(k, id);
      await s.abortUpload(k, id); // twice: no error
      expect(await s.head(k)).toBeUndefined();
      expect(await codeOf(s.uploadPart(k, id, 2, text('late')))).toBe('NOT_FOUND');
      const id2 = await s.startUpload(k);
      const p1 = await s.uploadPart(k, id2, 1, text('too small to be a first part'));
      const p2 = await s.uploadPart(k, id2, 2, text('last'));
      expect(await codeOf(s.completeUpload(k, id2, [{ partNumber: 1, etag: p1 }, { partNumber: 2, etag: p2 }]))).toBe('INVALID_INPUT');
      expect(await s.head(k)).toBeUndefined();
      await s.abortUpload(k, id2);
    });
  });
}

function sum(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}
