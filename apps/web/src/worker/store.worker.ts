/**
 * The store worker: owns the browser store (SQLite on OPFS, packs on OPFS) and does all byte
 * work, so the page never blocks. Answers Calls (protocol.ts) by method name and streams
 * progress events while adds, syncs and verifies run.
 */
import { CorruptDataError, Sha256 } from '@kura/core';
import { BrowserStore, MODEL_PATH, parseQuery, SEARCH_WAIT_MS, loadMiniLmOnWebWorker, type ChunkEvent, type DocumentInfo, type Embedder, type ListResult, type SearchHit } from '@kura/store/browser';
import { MAP_CELLS, type Added, type Call, type ErrorData, type Progress, type Reply, type SearchMode, type Semantic, type WorkerEvent } from '../protocol.js';
import { pull, push, type SyncTarget } from './sync.js';

const STORE = 'default';
let opening: Promise<BrowserStore> | undefined;

/** The kernel runs on other cores; this worker deduplicates, writes and commits. */
const OPTIONS = { ingestWorker: () => new Worker(new URL('./ingest.worker.ts', import.meta.url), { type: 'module', name: 'kura-ingest' }) };

function store(): Promise<BrowserStore> {
  opening ??= opened(BrowserStore.openOpfs(STORE, OPTIONS));
  return opening;
}

/**
 * Closes the store, runs `work` on its files, and opens it again; calls meanwhile wait for
 * the store opened after (the page's polls reopened the store mid-rebuild, which then found
 * it locked, "open in another tab": found in review).
 */
function reopenAfter(work: () => Promise<unknown>): Promise<BrowserStore> {
  const previous = opening;
  opening = opened(
    (async () => {
      await (await previous?.catch(() => undefined))?.close();
      await work();
      return BrowserStore.openOpfs(STORE, OPTIONS);
    })(),
  );
  return opening;
}

function opened(open: Promise<BrowserStore>): Promise<BrowserStore> {
  const p: Promise<BrowserStore> = open.then(
    (s) => {
      void withModel(s); // in the background: the store is usable at once
      return s;
    },
    (e) => {
      if (opening === p) opening = undefined; // let a later call try again (e.g. after the other tab closed)
      throw e;
    },
  );
  return p;
}

/**
 * The local model (decision 0036), from the files the Kura server serves beside the page,
 * run on a worker of its own; loaded once, put in use by every store this worker opens.
 */
let semantic: Semantic = { state: 'loading' };
let model: Promise<Embedder | undefined> | undefined;
const wired = new WeakSet<BrowserStore>();

async function withModel(s: BrowserStore): Promise<void> {
  model ??= loadMiniLmOnWebWorker(new URL(MODEL_PATH, self.location.origin).href, () => new Worker(new URL('./embed.worker.ts', import.meta.url), { type: 'module', name: 'kura-embed' })).then(
    (e) => {
      semantic = { state: 'ready', model: e.model };
      return e;
    },
    (e: unknown) => {
      semantic = { state: 'unavailable', reason: (e as Error).message };
      return undefined;
    },
  );
  const e = await model;
  if (!e || wired.has(s) || opening === undefined || (await opening) !== s) return; // (an erased store)
  wired.add(s);
  s.useEmbedder(e);
}

const post = (e: WorkerEvent) => (self as unknown as Worker).postMessage(e);

/** Progress events at most every 100 ms (and always the last one). */
function progress(task: Progress['task']) {
  const started = performance.now();
  let last = 0;
  return (done: number, total: number, current?: string, force = false) => {
    const now = performance.now();
    if (!force && now - last < 100 && done < total) return;
    last = now;
    const seconds = (now - started) / 1000;
    post({ type: 'progress', task, done, total, rate: seconds > 0 ? done / seconds : 0, ...(current ? { current } : {}) });
  };
}

function errorData(e: unknown): ErrorData {
  // The store says STORAGE_FULL past the site's quota (its DOMException before).
  if ((e instanceof DOMException && e.name === 'QuotaExceededError') || (e as { code?: unknown })?.code === 'STORAGE_FULL') {
    // (The pack it failed in is given up, FORMAT.md §6: smaller writes may still fit.)
    return { code: 'STORAGE_FULL', name: (e as Error).name, message: 'the browser refused more storage for this site (quota exceeded): delete documents and run GC, or free disk space' };
  }
  const err = e as { code?: unknown; name?: unknown; message?: unknown; reason?: unknown };
  return {
    code: typeof err?.code === 'string' ? err.code : 'INTERNAL',
    name: typeof err?.name === 'string' ? err.name : 'Error',
    message: typeof err?.message === 'string' ? err.message : String(e),
    ...(typeof err?.reason === 'string' ? { reason: err.reason } : {}),
  };
}

/** Downsamples a put's chunk events into at most MAP_CELLS cells (share of new bytes). */
function chunkMap(lengths: number[], fresh: boolean[]): Uint8Array {
  const total = lengths.reduce((n, l) => n + l, 0);
  if (lengths.length <= MAP_CELLS) return Uint8Array.from(fresh, (f) => (f ? 255 : 0));
  const cells = new Uint8Array(MAP_CELLS);
  const cellBytes = total / MAP_CELLS;
  const newIn = new Float64Array(MAP_CELLS);
  let at = 0;
  lengths.forEach((len, i) => {
    // A chunk may straddle cells: split its bytes between them.
    let start = at;
    const end = at + len;
    while (start < end) {
      const cell = Math.min(MAP_CELLS - 1, Math.floor(start / cellBytes));
      const cellEnd = Math.min(end, (cell + 1) * cellBytes);
      if (fresh[i]) newIn[cell]! += cellEnd - start;
      start = cellEnd === start ? end : cellEnd;
    }
    at = end;
  });
  newIn.forEach((n, i) => (cells[i] = Math.round((255 * n) / cellBytes)));
  return cells;
}

export interface FileToAdd {
  file: File;
  path: string;
}


const api = {
  async open() {
    const s = await store();
    return { config: { ...s.config, chunking: { ...s.config.chunking, seed: String(s.config.chunking.seed) } }, stats: await s.stats() };
  },

  stats: async () => (await store()).stats(),

  /**
   * Snapshots a picked or dropped folder (BrowserStore.snapshotFiles): the tree below the
   * folder the files share, labelled with its name unless a label is given.
   */
  async snapshot(files: FileToAdd[], label?: string) {
    const s = await store();
    const top = files[0]?.path.split('/')[0];
    const shared = top !== undefined && files.every((f) => f.path.startsWith(`${top}/`));
    const tree = files.map((f) => ({ path: shared ? f.path.slice(top!.length + 1) : f.path, file: f.file }));
    const report = progress('snapshot');
    const total = files.reduce((n, f) => n + f.file.size, 0);
    const r = await s.snapshotFiles(tree, { label: label || (shared ? top! : 'files'), onProgress: (p) => p.phase === 'files' && report(p.bytes, total) });
    report(total, total, undefined, true);
    return r;
  },

  snapshots: async () => (await store()).snapshots(),

  async add(files: FileToAdd[], tags: string[]) {
    const s = await store();
    const total = files.reduce((n, f) => n + f.file.size, 0);
    const report = progress('add');
    let done = 0;
    const outcome = { added: 0, failed: 0, bytes: 0, newBytes: 0 };
    report(0, total, undefined, true);
    const maps = files.map(() => ({ lengths: [] as number[], fresh: [] as boolean[] }));
    const items = files.map(({ file, path }, i) => ({
      blob: file,
      meta: { path, ...(file.type ? { mediaType: file.type } : {}), ...(tags.length ? { tags } : {}) },
      onChunk: (c: ChunkEvent) => {
        const m = maps[i]!;
        // A file put again (refused for want of space with another's write: put-many.ts)
        // reports its chunks anew: past its size, the first try's are forgotten.
        const sum = m.lengths.reduce((n, l) => n + l, 0);
        if (sum + c.length > file.size) {
          done -= sum;
          m.lengths = [];
          m.fresh = [];
        }
        m.lengths.push(c.length);
        m.fresh.push(c.fresh);
        done += c.length;
        report(done, total, path);
      },
    }));
    for await (const o of s.putBlobs(items)) {
      const { file, path } = files[o.index]!;
      const { lengths, fresh } = maps[o.index]!;
      const base: Added = { type: 'added', path, size: file.size };
      if (o.result) {
        const r = o.result;
        outcome.added++;
        outcome.bytes += r.size;
        outcome.newBytes += r.newBytesStored;
        post({ ...base, digest: r.digest, chunks: r.chunks, newChunks: r.newChunks, newBytes: r.newBytesStored, cells: chunkMap(lengths, fresh) });
      } else {
        outcome.failed++;
        done += file.size - lengths.reduce((n, l) => n + l, 0);
        post({ ...base, error: errorData(o.error) });
      }
      maps[o.index] = { lengths: [], fresh: [] }; // free it
    }
    report(total, total, undefined, true);
    return outcome;
  },

  async list(query: { q?: string; tag?: string; mode?: SearchMode; cursor?: string; limit?: number }): Promise<{ items: (DocumentInfo | SearchHit)[]; nextCursor?: string; search: boolean; notEmbedded?: number; fallbacks?: string[]; wordless?: boolean }> {
    const s = await store();
    const limit = query.limit ?? 50;
    if (query.q?.trim()) {
      if (query.mode !== 'keyword') await withModel(s); // a search by meaning waits for the model to load (or not)
      const offset = query.cursor ? Number(query.cursor) : 0;
      // A second at most for documents still to embed (a dropped folder's backlog embeds in the
      // background at ~12 a second here): the page says how many the meaning side could not see.
      const hits = await s.search(query.q, { limit: limit + 1, offset, waitMs: SEARCH_WAIT_MS, ...(query.mode ? { mode: query.mode } : {}), ...(query.tag ? { tag: query.tag } : {}) });
      return {
        items: hits.slice(0, limit),
        search: true,
        ...(hits.length > limit ? { nextCursor: String(offset + limit) } : {}),
        ...(hits.notEmbedded ? { notEmbedded: hits.notEmbedded } : {}),
        // (Not enumerable on the hits: carried across to the page by name.)
        ...(hits.fallbacks ? { fallbacks: hits.fallbacks } : {}),
        // Only filters (`type:pdf`), nothing to rank by: said, not "nothing matches".
        ...(hits.length === 0 && parseQuery(query.q).expr === null ? { wordless: true } : {}),
      };
    }
    const page: ListResult = await s.list({ limit, ...(query.tag ? { tag: query.tag } : {}), ...(query.cursor ? { cursor: query.cursor } : {}) });
    return { ...page, search: false };
  },

  tags: async () => (await store()).tags(),

  /**
   * For `pnpm bench browser`: embeds `texts` one at a time (as the background job does) with
   * the store's model, on its worker; the milliseconds it took.
   */
  async timeEmbedding(texts: string[]): Promise<{ ms: number; tokens: number }> {
    await withModel(await store());
    const e = await model;
    if (!e) throw Object.assign(new Error(`no model: ${semantic.state === 'unavailable' ? semantic.reason : 'not loaded'}`), { code: 'MODEL_UNAVAILABLE' });
    const started = performance.now();
    for (const t of texts) await e.embed([t]);
    return { ms: performance.now() - started, tokens: texts.reduce((n, t) => n + e.countTokens(t), 0) / texts.length };
  },

  /** Whether search by meaning is there, and what indexing (extraction, embedding) has left. */
  async indexing(): Promise<{ semantic: Semantic; queued: number; embedding: { documents: number; chunks: number; pending: number } | null }> {
    const status = await (await store()).indexStatus();
    return { semantic, queued: status.queued, embedding: status.embedding };
  },

  /** An entry (by path, or by digest: decision 0025), its versions and what deleting it frees. */
  async details(ref: string | { path: string; version: number }) {
    const s = await store();
    // An older version (from the versions table, named apart: a string is a literal path, as
    // an older store may have `song@2`): the path's entry as that version shows it — its name
    // and media type, its own digest, size and time — not an unnamed document whose tags
    // cannot be changed.
    if (typeof ref !== 'string') {
      const { path, version } = ref;
      const [entry, v, versions] = [await s.stat(path), await s.pathVersion(path, { version }), await s.versions(path)];
      const chunks = (await s.manifest(v.digest)).length;
      const info = { ...entry, digest: v.digest, size: v.size, chunks, version: v.version, updatedAt: v.createdAt };
      return { info, versions, exclusiveSize: await s.exclusiveSize(v.digest), older: true };
    }
    const info = await s.stat(ref);
    const versions = info.path ? await s.versions(info.path) : [];
    return { info, versions, exclusiveSize: await s.exclusiveSize(info.digest) };
  },

  /** The document as a Blob, offered only after its bytes hashed to its digest. */
  async download(digest: string, named?: string): Promise<{ blob: Blob; name: string }> {
    const s = await store();
    const doc = await s.document(digest);
    const hash = new Sha256();
    // Large documents accumulate as Blobs, which the browser may keep on disk.
    let blob = new Blob([]);
    let parts: Uint8Array[] = [];
    let held = 0;
    for await (const piece of doc.stream()) {
      hash.update(piece);
      parts.push(piece);
      held += piece.length;
      if (held >= 32 * 1024 * 1024) {
        blob = new Blob([blob, ...(parts as BlobPart[])]);
        parts = [];
        held = 0;
      }
    }
    const got = hash.digest();
    if (got !== doc.digest) throw new CorruptDataError(`the bytes of ${digest} hash to ${got}: not offered`, 'digest-mismatch');
    // (An older version's bytes have no entry of their own: named by the path it is a version of.)
    const name = (named ?? doc.path)?.split('/').pop() || digest.slice(7, 19);
    return { blob: new Blob([blob, ...(parts as BlobPart[])], { type: doc.mediaType ?? 'application/octet-stream' }), name };
  },

  /** A path with its versions, or (a digest) that content everywhere. */
  delete: async (ref: string) => (ref.startsWith('sha256:') ? (await store()).delete(ref) : (await store()).deletePath(ref)),
  addTags: async (ref: string, tags: string[]) => (await store()).addTags(ref, tags),
  removeTags: async (ref: string, tags: string[]) => (await store()).removeTags(ref, tags),
  gc: async () => (await store()).gc(),

  /** Verify's report, each damaged document with its path (people know files by name). */
  async verify() {
    const s = await store();
    const report = progress('verify');
    const r = await s.verify((p) => report(p.done, p.total, p.phase));
    const damagedDocuments = await Promise.all(
      r.damagedDocuments.map(async (d) => ({ ...d, path: (await s.document(d.digest, { unlisted: true }).catch(() => undefined))?.path ?? null })),
    );
    return { ...r, damagedDocuments };
  },

  push: async (target: SyncTarget) => push(await store(), target, progress('push')),
  pull: async (target: SyncTarget) => pull(await store(), target, progress('pull')),

  /**
   * Closes and deletes this origin's store, then opens a new empty one — also a store that
   * cannot be opened (damaged): the way out when nothing else helps.
   */
  async erase() {
    await reopenAfter(() => BrowserStore.destroy(STORE));
    return api.open();
  },

  /**
   * Makes the store's database again from its log (a damaged or lost database: CORRUPT_DATA,
   * reason `database`), then opens it. Nothing of the store is in the database alone.
   */
  async rebuild() {
    await reopenAfter(() => BrowserStore.rebuild(STORE));
    return api.open();
  },

  /** Closes the store (its files can then be opened by another tab or inspected). */
  async close() {
    const s = opening && (await opening);
    opening = undefined;
    await s?.close();
  },

  async storage() {
    const est = await navigator.storage.estimate();
    const persisted = (await navigator.storage.persisted?.()) ?? false;
    return { usage: est.usage ?? 0, quota: est.quota ?? 0, persisted };
  },
};

export type StoreApi = typeof api;

self.onmessage = async (ev: MessageEvent<Call>) => {
  const { id, method, args } = ev.data;
  let reply: Reply;
  try {
    const fn = (api as Record<string, (...a: unknown[]) => Promise<unknown>>)[method];
    if (!fn) throw new Error(`no method ${method}`);
    reply = { id, ok: true, value: await fn(...args) };
  } catch (e) {
    reply = { id, ok: false, error: errorData(e) };
  }
  (self as unknown as Worker).postMessage(reply);
};

// Calls posted while this module's imports were still loading (the wasm core loads with
// top-level await) were dispatched to no handler: the page waits for this before sending.
post({ type: 'ready' });
