/**
 * The store as a token limited to path prefixes sees it (decision 0060): every call a route or
 * an MCP tool makes goes through this view, which lets through what lies under the prefixes
 * and nothing else. Closed by default: a method not named below is store-wide (stats, chunks,
 * snapshots, GC, verify, policies, tokens…) and refused with FORBIDDEN, so a route that starts
 * calling a new store method is refused for limited tokens until this file says how to limit it.
 *
 * - A path outside the prefixes is refused (FORBIDDEN) whether or not it exists: the answer
 *   says nothing about what lies outside.
 * - A document named by its digest is reached only through a version of a path under the
 *   prefixes; any other digest is NOT_FOUND, as if the store lacked it.
 * - Lists, search and grep are narrowed to the prefixes (AND-ed with the caller's own filters).
 * - Prefixes compare as strings, exactly as stored paths do: paths are never normalized (no
 *   Unicode folding, no `..` resolution — such paths are refused before they reach a store),
 *   so no spelling of a path outside reaches inside.
 */
import type { GrepOptions, ListQuery, MetaUpdate, PutMeta, SearchHits, SearchQuery, Store } from '@kura/store';
import { AmbiguousError, NotFoundError, parseRef } from '@kura/store';
import { HttpError } from '../errors.js';

/** Whether `path` lies under one of `prefixes`. */
export function within(path: string, prefixes: readonly string[]): boolean {
  return prefixes.some((p) => path.startsWith(p));
}

/**
 * The prefixes that lie under both lists: a prefix asked for inside an allowed one, or an
 * allowed one inside a prefix asked for. Empty when they share no path.
 */
export function sharedPrefixes(asked: readonly string[], allowed: readonly string[]): string[] {
  const out = new Set<string>();
  for (const a of asked) for (const t of allowed) if (a.startsWith(t)) out.add(a);
  else if (t.startsWith(a)) out.add(t);
  return [...out].sort();
}

/** The path a reference names (`path`, `path@N`, `path@<time>`: the store's own reading), or undefined for a digest. */
const pathOfRef = (ref: string): string | undefined => (ref.startsWith('sha256:') ? undefined : parseRef(ref).path);

/**
 * Hits as a limited token gets them: without the figures computed over the whole store. BM25
 * weighs a word by how many documents of the whole index hold it, so a keyword score moves when
 * documents outside the prefixes gain or lose that word; hybrid's fused score is made of the
 * sides' scores scaled over the window (decision 0071), BM25's among them; `notEmbedded` counts
 * every document still to embed. (Ranks stay: they order the token's own hits, and so does a
 * semantic side's cosine, which is the document's and the question's alone. The order itself
 * still rests on the whole index's statistics — decision 0060 says what that leaves.)
 */
export function withoutStoreWideFigures(hits: SearchHits): SearchHits {
  const fused = hits.mode === 'hybrid';
  const out = hits.map((h) => {
    const { keyword, exact, ...hit } = h;
    if (!keyword && !exact && !fused) return h;
    // Keyword mode's (and history's) score is the BM25 itself; hybrid's is fused from BM25 too.
    // (The exact list's score is a BM25 too.)
    const { score, ...rest } = hit;
    const keep = !fused && !(keyword && score === keyword.score);
    return { ...(keep ? hit : rest), ...(keyword ? { keyword: { rank: keyword.rank } } : {}), ...(exact ? { exact: { rank: exact.rank } } : {}) };
  }) as unknown as SearchHits;
  // (`mode` says which side ranked: with scores gone, the one way to read the order — it was lost, a trial.)
  for (const key of ['mode', 'parsedAs', 'fallbacks', 'reranked'] as const) {
    if (hits[key] !== undefined) Object.defineProperty(out, key, { value: hits[key], writable: true, configurable: true });
  }
  return out;
}

export function limitStore(store: Store, prefixes: readonly string[]): Store {
  const shown = prefixes.join(', ');
  const outside = (path: string) => new HttpError('FORBIDDEN', `${path} is outside the prefixes this token may reach (${shown})`, { prefixes: [...prefixes] });
  const path = (p: unknown): string => {
    if (typeof p !== 'string') throw new HttpError('FORBIDDEN', `this token may only name paths under ${shown}`, { prefixes: [...prefixes] });
    if (!within(p, prefixes)) throw outside(p);
    return p;
  };
  const reached = async (digest: string): Promise<string> => {
    if (!(await store.heldUnder(digest, prefixes))) throw new NotFoundError(`no document ${digest}`);
    return digest;
  };
  /** The one path under the prefixes showing `digest`: what a digest names for this token. */
  const entryOf = async (digest: string): Promise<string> => {
    const paths = await store.shownUnder(digest, prefixes, 10);
    if (paths.length === 0) throw new NotFoundError(`no document ${digest}`);
    if (paths.length > 1) throw new AmbiguousError(`${paths.length} paths show ${digest}: name one`, { paths });
    return paths[0]!;
  };
  const ref = async (r: string): Promise<string> => {
    const p = pathOfRef(r);
    return p === undefined ? entryOf(r) : (path(p), r);
  };
  // Each prefix asked for that lies wholly outside is FORBIDDEN, in lists and search as in grep:
  // an empty answer read as "nothing there" (it was empty here and FORBIDDEN to grep: a trial).
  const narrowed = <Q extends { pathPrefix?: string | undefined; pathPrefixes?: readonly string[] | undefined }>(q: Q): Q => {
    for (const p of [...(q.pathPrefix !== undefined ? [q.pathPrefix] : []), ...(q.pathPrefixes ?? [])]) if (sharedPrefixes([p], prefixes).length === 0) throw outside(p);
    return { ...q, pathPrefixes: q.pathPrefixes ? sharedPrefixes(q.pathPrefixes, prefixes) : [...prefixes] };
  };
  const putMeta = (meta: PutMeta | undefined): PutMeta => {
    path(meta?.path);
    return meta!;
  };

  const allowed: Partial<Record<keyof Store, unknown>> = {
    config: store.config,
    readonly: store.readonly,
    // Applied, without the counts: the log's seq counts every commit, outside the prefixes too.
    refresh: async () => {
      await store.refresh();
      return {};
    },
    // Without newChunks and newBytesStored: whether a put's bytes were new says whether the
    // whole store held them — content outside the prefixes, confirmed by guessing it.
    put: async (input: Parameters<Store['put']>[0], meta?: PutMeta, options?: Parameters<Store['put']>[2]) => {
      const { newChunks: _chunks, newBytesStored: _bytes, ...result } = await store.put(input, putMeta(meta), options);
      return result;
    },
    // (commitChunks is not here: its MISSING_CHUNKS names every key the whole store lacks — the
    // presence of chunks is store-wide, as chunks:missing is.)
    stat: async (r: string) => store.stat(await ref(r)),
    resolve: async (r: string) => store.resolve(await ref(r)),
    // The path and type of the entry a digest names only when that entry lies inside: a digest
    // reached through a version inside may be shown by an entry outside (kura_get answered its
    // path; a GET its type — found in review).
    document: async (digest: string) => {
      const doc = await store.document(await reached(digest));
      return doc.path != null && within(doc.path, prefixes) ? doc : { ...doc, path: null, mediaType: null };
    },
    getBytes: async (digest: string) => store.getBytes(await reached(digest)),
    extractedText: async (digest: string) => store.extractedText(await reached(digest)),
    getRange: async (digest: string, start: number, end: number) => store.getRange(await reached(digest), start, end),
    get: (digest: string) =>
      (async function* () {
        yield* store.get(await reached(digest));
      })(),
    getRangeStream: (digest: string, start: number, end: number) =>
      (async function* () {
        yield* store.getRangeStream(await reached(digest), start, end);
      })(),
    list: (q: ListQuery = {}) => store.list(narrowed(q)),
    search: async (query: string, o: SearchQuery = {}) => {
      if (o.snapshot !== undefined) throw new HttpError('FORBIDDEN', 'snapshots are store-wide: a token limited to prefixes cannot search one', { prefixes: [...prefixes] });
      // (Words read as typed: the nearest word to a typo is looked up in the whole index.)
      return withoutStoreWideFigures(await store.search(query, { ...narrowed(o), typos: false }));
    },
    grep: (pattern: string, o: GrepOptions = {}) => {
      // Each prefix asked for is checked: one wholly outside is FORBIDDEN even beside one
      // inside (it was dropped without a word: a trial), as a lone one is (decision 0060).
      for (const p of o.prefixes ?? []) if (sharedPrefixes([p], prefixes).length === 0) throw outside(p);
      const shared = o.prefixes?.length ? sharedPrefixes(o.prefixes, prefixes) : [...prefixes];
      return store.grep(pattern, { ...o, prefixes: shared });
    },
    updateMeta: async (updates: MetaUpdate[]) => {
      const limited: MetaUpdate[] = [];
      for (const u of updates) {
        if (u.path !== undefined) limited.push({ ...u, path: path(u.path) });
        else if (typeof u.digest === 'string') {
          const { digest, ...change } = u;
          limited.push({ ...change, path: await entryOf(digest) });
        } else limited.push(u); // neither: the store refuses it
      }
      return store.updateMeta(limited);
    },
    versions: (p: string) => store.versions(path(p)),
    pathVersion: (p: string, which?: Parameters<Store['pathVersion']>[1]) => store.pathVersion(path(p), which),
    deletePath: (p: string, o?: Parameters<Store['deletePath']>[1]) => store.deletePath(path(p), o),
    deleteVersion: (p: string, version: number) => store.deleteVersion(path(p), version),
    pin: (target: Parameters<Store['pin']>[0], pinned?: boolean) => {
      if ('snapshot' in target) throw new HttpError('FORBIDDEN', 'snapshots are store-wide: a token limited to prefixes cannot pin one', { prefixes: [...prefixes] });
      return store.pin({ path: path(target.path), version: target.version }, pinned);
    },
    forgetVersions: (o: Parameters<Store['forgetVersions']>[0]) => {
      // Under one prefix the token reaches: the one asked for, or the token's only one.
      const asked = o.prefix ?? (prefixes.length === 1 ? prefixes[0]! : undefined);
      if (asked === undefined) throw new HttpError('FORBIDDEN', `name a prefix under one of ${shown}`, { prefixes: [...prefixes] });
      const shared = sharedPrefixes([asked], prefixes);
      if (shared.length !== 1) throw outside(asked);
      return store.forgetVersions({ ...o, prefix: shared[0]! });
    },
  };

  return new Proxy(store, {
    get(_target, key) {
      if (Object.hasOwn(allowed, key)) return allowed[key as keyof Store];
      if (typeof key === 'symbol' || key === 'then') return undefined;
      return () => {
        throw new HttpError('FORBIDDEN', `${String(key)} is store-wide: a token limited to prefixes (${shown}) cannot use it`, { prefixes: [...prefixes] });
      };
    },
  });
}
