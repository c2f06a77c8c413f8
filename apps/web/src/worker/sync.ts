/**
 * Sync between the browser store and a Kura server over its HTTP API (docs/HTTP.md, chunk
 * sync). Push sends only chunks the server lacks: documents are cut with the *server's*
 * chunking parameters (its seed differs from ours, and chunk keys depend on it), the keys
 * asked for in `chunks:missing`, the missing ones uploaded, then the document committed from
 * its keys — the server re-hashes everything. Pull fetches the documents this store lacks.
 */
import { KuraError, ingest, resolveChunkParams, type ResolvedChunkParams } from '@kura/core';
import type { BrowserStore, DocumentInfo } from '@kura/store/browser';

export interface SyncTarget {
  url: string;
  token?: string;
}

export interface SyncReport {
  documents: number;
  /** Entries the other side already had, as they are here. */
  skipped: number;
  /** Entries the other side had with fewer tags or other metadata: those were added. */
  updated: number;
  failed: { digest: string; message: string }[];
  /** Logical bytes of the documents transferred. */
  logicalBytes: number;
  /** Bytes that crossed the network in request or response bodies for chunk/document data. */
  bytesSent: number;
  bytesReceived: number;
  chunksSent: number;
  chunksSkipped: number;
  seconds: number;
}

export type OnSyncProgress = (done: number, total: number, current: string) => void;

/** Keys asked for at once (the server's limit is 10,000) and bytes of chunks buffered meanwhile. */
const BATCH_KEYS = 1000;
const BATCH_BYTES = 8 * 1024 * 1024;

export class SyncError extends KuraError {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super('SYNC_FAILED', message);
  }
}

class Remote {
  readonly base: string;
  constructor(readonly target: SyncTarget) {
    let u: URL;
    try {
      u = new URL(target.url);
    } catch {
      throw new SyncError(`"${target.url}" is not a URL (e.g. http://127.0.0.1:8787)`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new SyncError('the server URL must be http:// or https://');
    this.base = u.origin + u.pathname.replace(/\/+$/, '');
  }

  async fetch(path: string, init: RequestInit = {}, ok: number[] = [200]): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.target.token) headers.set('authorization', `Bearer ${this.target.token}`);
    let res: Response;
    try {
      res = await fetch(this.base + path, { ...init, headers });
    } catch (e) {
      throw new SyncError(`cannot reach ${this.base} (${(e as Error).message}); is the server running, and does it allow this page's origin (kura serve --cors-origin)?`);
    }
    if (!ok.includes(res.status)) {
      let detail = `HTTP ${res.status}`;
      try {
        const body = (await res.json()) as { error?: { code?: string; message?: string } };
        if (body.error) detail = `${body.error.code}: ${body.error.message}`;
      } catch {
        // not the API's error shape
      }
      if (res.status === 401) detail = `the server wants a token (${detail})`;
      if (res.status === 403) detail = `the token lacks the scope this needs (${detail})`;
      throw new SyncError(`${init.method ?? 'GET'} ${path}: ${detail}`, res.status);
    }
    return res;
  }

  async json<T>(path: string, init: RequestInit = {}, ok: number[] = [200]): Promise<T> {
    return (await (await this.fetch(path, init, ok)).json()) as T;
  }

  post<T>(path: string, body: unknown, ok: number[] = [200]): Promise<T> {
    return this.json<T>(path, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }, ok);
  }
}

function emptyReport(): SyncReport {
  return { documents: 0, skipped: 0, updated: 0, failed: [], logicalBytes: 0, bytesSent: 0, bytesReceived: 0, chunksSent: 0, chunksSkipped: 0, seconds: 0 };
}

/** An entry's path, media type, tags and metadata, as a put gives them. */
function entryMeta(doc: DocumentInfo) {
  return {
    ...(doc.path ? { path: doc.path } : {}),
    ...(doc.mediaType ? { mediaType: doc.mediaType } : {}),
    ...(doc.tags.length ? { tags: doc.tags } : {}),
    ...(Object.keys(doc.meta).length ? { meta: doc.meta } : {}),
  };
}

/** The server's entry of `doc`'s name: by path, or (pathless) its document; undefined when it has none. */
async function serverEntry(remote: Remote, doc: DocumentInfo): Promise<Pick<DocumentInfo, 'digest' | 'tags' | 'meta'> | undefined> {
  if (!doc.path) {
    const head = await remote.fetch(`/v1/documents/${doc.digest}`, { method: 'HEAD' }, [200, 404]);
    return head.status === 200 ? { digest: doc.digest, tags: doc.tags, meta: doc.meta } : undefined;
  }
  const res = await remote.fetch(`/v1/entry?path=${encodeURIComponent(doc.path)}`, {}, [200, 404]);
  return res.status === 200 ? ((await res.json()) as DocumentInfo) : undefined;
}

/** The digests of a path's versions on the server, oldest first ([] when it has none). */
async function serverVersions(remote: Remote, path: string): Promise<string[]> {
  const res = await remote.fetch(`/v1/versions?path=${encodeURIComponent(path)}`, {}, [200, 404]);
  if (res.status !== 200) return [];
  return ((await res.json()) as { versions: { digest: string }[] }).versions.map((v) => v.digest);
}

/**
 * Of a path whose latest versions differ — `mine` on the side sending, `theirs` on the other
 * — which is newer: the sender's when the other side's latest is one of the sender's older
 * versions ('here': send it), the other's when the sender's latest is one of its older versions
 * ('there': leave it), else neither ('diverged': both changed since they last agreed). A path
 * the other side never had is 'here'.
 */
async function whichIsNewer(
  path: string,
  mine: string,
  theirs: string,
  myHistory: (path: string) => Promise<{ digest: string }[] | string[]>,
  theirHistory: (path: string) => Promise<{ digest: string }[] | string[]>,
): Promise<'here' | 'there' | 'diverged'> {
  const digests = (list: { digest: string }[] | string[]) => list.map((v) => (typeof v === 'string' ? v : v.digest));
  if (digests(await myHistory(path)).includes(theirs)) return 'here';
  if (digests(await theirHistory(path)).includes(mine)) return 'there';
  return 'diverged';
}

/**
 * What the other side's entry lacks of `doc`'s tags and metadata (a change to send), or
 * undefined when it has them all. Tags and keys are only added: sync never removes what the
 * other side holds.
 */
function metaChange(doc: Pick<DocumentInfo, 'tags' | 'meta'>, other: Pick<DocumentInfo, 'tags' | 'meta'>): { addTags?: string[]; meta?: Record<string, string> } | undefined {
  const addTags = doc.tags.filter((t) => !other.tags.includes(t));
  const meta = Object.fromEntries(Object.entries(doc.meta).filter(([k, v]) => other.meta[k] !== v));
  if (!addTags.length && !Object.keys(meta).length) return undefined;
  return { ...(addTags.length ? { addTags } : {}), ...(Object.keys(meta).length ? { meta } : {}) };
}

async function allDocuments(list: (cursor?: string) => Promise<{ items: DocumentInfo[]; nextCursor?: string }>): Promise<DocumentInfo[]> {
  const out: DocumentInfo[] = [];
  let cursor: string | undefined;
  do {
    const page = await list(cursor);
    out.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

function sameParams(a: ResolvedChunkParams, b: ResolvedChunkParams): boolean {
  return a.min === b.min && a.avg === b.avg && a.max === b.max && a.seed === b.seed;
}

/** Pushes every listed document of `store` the server lacks. */
export async function push(store: BrowserStore, target: SyncTarget, onProgress: OnSyncProgress): Promise<SyncReport> {
  const started = performance.now();
  const remote = new Remote(target);
  const config = await remote.json<{ chunking: { avg: number; seed: string } }>('/v1/config');
  const params = resolveChunkParams({ avg: config.chunking.avg, seed: BigInt(config.chunking.seed) });
  // Same parameters (a store made to match the server): our own chunk keys are the server's.
  const reuseKeys = sameParams(params, store.config.chunking);
  const docs = await allDocuments((cursor) => store.list({ limit: 500, ...(cursor ? { cursor } : {}) }));
  const total = docs.reduce((n, d) => n + d.size, 0);
  const report = emptyReport();
  let done = 0;
  for (const doc of docs) {
    onProgress(done, total, doc.path ?? doc.digest);
    try {
      // What the server has under this entry's name: a path's entry (its digest, tags and
      // metadata), or for a pathless entry the document. Skipped only when it is this entry —
      // a server holding the same bytes under another name lacks this one (the name never
      // reached it), and one holding this path with fewer tags lacks those.
      const there = await serverEntry(remote, doc);
      const ahead = there && there.digest !== doc.digest ? await whichIsNewer(doc.path!, doc.digest, there.digest, (p) => store.versions(p), (p) => serverVersions(remote, p)) : 'here';
      if (there && there.digest === doc.digest) {
        const change = metaChange(doc, there);
        if (change) {
          await remote.json(`/v1/entry?path=${encodeURIComponent(doc.path!)}`, { method: 'PATCH', body: JSON.stringify(change), headers: { 'content-type': 'application/json' } }, [200, 204]);
          report.updated++;
        } else report.skipped++;
      } else if (ahead === 'there') {
        report.skipped++; // the server's is newer: a pull brings it
      } else if (ahead === 'diverged') {
        report.failed.push({ digest: doc.digest, message: `${doc.path}: changed here and on the server since they last agreed; not pushed (the server's latest stays; pull it, or add this one under another name)` });
      } else {
        const keys: string[] = [];
        const counted = new Set<string>();
        let batch: { key: string; bytes: () => Promise<Uint8Array> }[] = [];
        let batchBytes = 0;
        const flush = async () => {
          if (!batch.length) return;
          const { missing } = await remote.post<{ missing: string[] }>('/v1/chunks:missing', { keys: batch.map((c) => c.key) });
          const want = new Set(missing);
          for (const c of batch) {
            // A chunk the document repeats is counted once: sent, or one the server had (its
            // repeats were counted as chunks "the server had": a trial).
            if (counted.has(c.key)) continue;
            counted.add(c.key);
            if (!want.has(c.key)) {
              report.chunksSkipped++;
              continue;
            }
            const body = await c.bytes();
            await remote.fetch(`/v1/chunks/${c.key}`, { method: 'PUT', body: body as BodyInit, headers: { 'content-type': 'application/octet-stream' } }, [200, 201]);
            report.chunksSent++;
            report.bytesSent += body.length;
          }
          batch = [];
          batchBytes = 0;
        };
        if (reuseKeys) {
          for (const e of await store.manifest(doc.digest)) {
            keys.push(e.key);
            batch.push({ key: e.key, bytes: () => store.chunk(e.key) });
            if (batch.length >= BATCH_KEYS) await flush();
          }
        } else {
          // Cut the document as the server would; raw chunks (no compression) are what PUT takes.
          const reader = await store.document(doc.digest);
          for await (const c of ingest(reader.stream(), { chunking: params, compression: false })) {
            keys.push(c.key);
            const payload = c.payload.slice(); // the kernel reuses its buffers
            batch.push({ key: c.key, bytes: async () => payload });
            batchBytes += payload.length;
            if (batch.length >= BATCH_KEYS || batchBytes >= BATCH_BYTES) await flush();
          }
        }
        await flush();
        await remote.post(
          '/v1/documents:commit',
          {
            chunks: keys,
            digest: doc.digest,
            ...(doc.path ? { path: doc.path } : {}),
            ...(doc.mediaType ? { mediaType: doc.mediaType } : {}),
            ...(doc.tags.length ? { tags: doc.tags } : {}),
            ...(Object.keys(doc.meta).length ? { meta: doc.meta } : {}),
          },
          [200, 201],
        );
        report.documents++;
        report.logicalBytes += doc.size;
      }
    } catch (e) {
      if (e instanceof SyncError && (e.status === undefined || e.status === 401 || e.status === 403)) throw e; // no point going on
      report.failed.push({ digest: doc.digest, message: (e as Error).message });
    }
    done += doc.size;
    onProgress(done, total, doc.path ?? doc.digest);
  }
  report.seconds = (performance.now() - started) / 1000;
  return report;
}

/** Fetches every document of the server this store lacks (each checked against its digest). */
export async function pull(store: BrowserStore, target: SyncTarget, onProgress: OnSyncProgress): Promise<SyncReport> {
  const started = performance.now();
  const remote = new Remote(target);
  const docs = await allDocuments((cursor) => remote.json(`/v1/documents?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`));
  const wanted: DocumentInfo[] = [];
  const report = emptyReport();
  for (const d of docs) {
    // As push: skipped only when this store has this entry; the same bytes under another name
    // are linked to this one without a transfer, and missing tags or metadata added. A path
    // whose latest version here is newer than the server's is left (a push sends it), one
    // changed on both sides since they agreed is reported, not overwritten.
    try {
      const here = d.path ? await store.stat(d.path).catch(() => undefined) : (await store.has(d.digest)) ? { digest: d.digest, tags: d.tags, meta: d.meta } : undefined;
      const ahead = here && here.digest !== d.digest ? await whichIsNewer(d.path!, d.digest, here.digest, (p) => serverVersions(remote, p), (p) => store.versions(p)) : 'here';
      if (here && here.digest === d.digest) {
        const change = metaChange(d, here);
        if (change) {
          await store.updateMeta([{ path: d.path!, ...change }]);
          report.updated++;
        } else report.skipped++;
      } else if (ahead === 'there') {
        report.skipped++; // this store's is newer: a push sends it
      } else if (ahead === 'diverged') {
        report.failed.push({ digest: d.digest, message: `${d.path}: changed here and on the server since they last agreed; not pulled (this store's latest stays; push it, or keep the server's under another name)` });
      } else if (await store.has(d.digest)) {
        await store.link(d.digest, entryMeta(d));
        report.documents++;
      } else wanted.push(d);
    } catch (e) {
      if (e instanceof SyncError && (e.status === undefined || e.status === 401 || e.status === 403)) throw e;
      report.failed.push({ digest: d.digest, message: (e as Error).message });
    }
  }
  const total = wanted.reduce((n, d) => n + d.size, 0);
  let done = 0;
  for (const doc of wanted) {
    onProgress(done, total, doc.path ?? doc.digest);
    try {
      const res = await remote.fetch(`/v1/documents/${doc.digest}`);
      if (!res.body) throw new SyncError(`GET ${doc.digest}: empty body`);
      let received = 0;
      const counted = res.body.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(piece, ctl) {
            received += piece.length;
            ctl.enqueue(piece);
          },
        }),
      );
      await store.put(counted, { expectDigest: doc.digest, ...entryMeta(doc) });
      report.bytesReceived += received;
      report.documents++;
      report.logicalBytes += doc.size;
    } catch (e) {
      if (e instanceof SyncError && (e.status === undefined || e.status === 401 || e.status === 403)) throw e;
      report.failed.push({ digest: doc.digest, message: (e as Error).message });
    }
    done += doc.size;
    onProgress(done, total, doc.path ?? doc.digest);
  }
  report.seconds = (performance.now() - started) / 1000;
  return report;
}
