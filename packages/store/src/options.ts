/**
 * Options of Store.init / Store.open and of put metadata, validated with zod. A store's
 * chunking parameters are fixed at init and recorded in its `config` table (FORMAT.md §7).
 */
import { AVG_MAX, AVG_MIN, DEFAULT_AVG, DEFAULT_LEVEL, InvalidInputError, LEVEL_MAX, LEVEL_MIN } from '@kura/core';
import { z } from 'zod';
import { mediaTypesSql } from './search/media-type-filter.js';
import { parseRef } from './path-ref.js';

export const Durability = z.enum(['full', 'normal']);
export type Durability = z.infer<typeof Durability>;

const level = z
  .number()
  .int()
  .min(LEVEL_MIN)
  .max(LEVEL_MAX)
  .refine((l) => l !== 0, 'level 0 is not a level (zstd reads it as "default"; say 3)');

const avg = z
  .number()
  .int()
  .min(AVG_MIN)
  .max(AVG_MAX)
  .refine((n) => (n & (n - 1)) === 0, 'avg must be a power of two');

const seed = z.union([
  z.literal('random'),
  z.bigint().min(0n).max((1n << 64n) - 1n),
  z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
]);

export const InitOptions = z
  .object({
    chunking: z.object({ avg: avg.default(DEFAULT_AVG), seed: seed.default(0) }).strict().default({ avg: DEFAULT_AVG, seed: 0 }),
    /** zstd level for new chunks, or false to store every chunk raw. */
    compression: z.union([level, z.literal(false)]).default(DEFAULT_LEVEL),
    durability: Durability.default('normal'),
  })
  .strict();
export type InitOptions = z.input<typeof InitOptions>;

export const OpenOptions = z
  .object({
    readonly: z.boolean().default(false),
    durability: Durability.optional(),
    /** When given, must equal the store's recorded parameters (else FORMAT_MISMATCH). */
    chunking: z.object({ avg: avg.optional(), seed: seed.optional() }).strict().optional(),
    /** Overrides the recorded level for chunks written by this session. */
    compression: z.union([level, z.literal(false)]).optional(),
    /**
     * Worker threads for puts of large buffers (Node): 0 keeps all byte work on the calling
     * thread; default one per core, started on the first such put.
     */
    ingestWorkers: z.number().int().min(0).max(64).optional(),
    /** Pack size at which packs are sealed (default 64 MiB). A tuning knob; tests use it small. */
    packSize: z.number().int().min(4096).max(1 << 30).optional(),
    /**
     * While other writers have the store open, GC reclaims a chunk only once it has been
     * unreferenced this long (default one hour; FORMAT.md §9): a put in another process that
     * shares it meanwhile keeps it.
     */
    gcMarginMs: z.number().int().min(0).max(30 * 24 * 3600 * 1000).optional(),
    /**
     * On an object store: GC deletes the commits a checkpoint covers once the checkpoint is this
     * old (default 7 days; decision 0045). A server stopped or paused longer starts again from
     * a checkpoint.
     */
    logRetentionMs: z.number().int().min(60 * 60 * 1000).max(365 * 24 * 3600 * 1000).optional(),
  })
  .strict();
export type OpenOptions = z.input<typeof OpenOptions>;

// Tags and metadata are well-formed Unicode: a lone surrogate has no UTF-8, and SQLite stored
// it as U+FFFD — two different tags became one, silently (a trial).
const wellFormed = (what: string) => [(t: string) => !hasLoneSurrogate(t), `${what} must be well-formed Unicode (a lone surrogate is not a character)`] as const;
const tag = z
  .string()
  .min(1, 'a tag cannot be empty')
  .max(256, 'a tag is at most 256 characters')
  .regex(/^[^\u0000-\u001f]+$/, 'tags must not contain control characters')
  .refine(...wellFormed('a tag'));
const metaKey = z
  .string()
  .min(1, 'a metadata key cannot be empty')
  .max(256, 'a metadata key is at most 256 characters')
  .refine(...wellFormed('a metadata key'));
const metaValue = z
  .string()
  .max(64 * 1024)
  .refine(...wellFormed('a metadata value'));

/** A path's length at most, in UTF-16 code units (FORMAT.md §11). */
export const PATH_MAX = 4096;
// At most 4,096 UTF-16 code units, as FORMAT.md says: zod's max counts code points, and let
// 3,000 emoji (6,000 units) through (a trial).
const docPath = z
  .string()
  .min(1)
  .refine((p) => p.length <= PATH_MAX, `path must be at most ${PATH_MAX} characters (UTF-16 code units)`)
  .regex(/^[^\u0000]+$/, 'path must not contain NUL');

/**
 * Why a new path cannot be given (undefined: it can). A path is named again later — by
 * `resolve` (PATH@N, PATH@<time>, a digest), over HTTP (relative, no empty, `.` or `..`
 * segments) and by prefix — so what none of those could name is refused when it would be made:
 * `a/../b`, `dir/` or `song@2` were stored and then unreachable, or named another document.
 * (Entries stored before this rule keep their paths and are read, changed and deleted by them.)
 */
export function newPathProblem(path: string): string | undefined {
  if (LONE_SURROGATE.test(path)) return 'path must be well-formed Unicode (a lone surrogate is not a character)';
  if (path.includes('\u{10ffff}')) return 'path must not contain U+10FFFF (prefix ranges end with it)';
  if (path.startsWith('/')) return 'path must be relative (no leading /)';
  if (path.split('/').some((s) => s === '' || s === '.' || s === '..')) return 'path must not contain empty, "." or ".." segments';
  if (/^sha256:/i.test(path)) return 'a path must not start with "sha256:" (that names a document by its digest)';
  if (/^[0-9a-f]{64}$/i.test(path)) return 'a path must not be 64 hex digits alone (the CLI and MCP read that as a digest): give it a directory or an extension';
  const { which } = parseRef(path);
  if (which.version !== undefined || which.at !== undefined) {
    return `path must not end like a version reference (${path.slice(path.lastIndexOf('@'))}): PATH@N names version N of PATH, and PATH@<time> the version latest then`;
  }
  return undefined;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Whether `text` holds a lone surrogate: a UTF-16 code unit that is no character, and has no UTF-8. */
export function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}

/** A path a put may make (newPathProblem). */
const newPath = docPath.superRefine((p, ctx) => {
  const problem = newPathProblem(p);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});
// Its parameters printable ASCII, as an HTTP header carries them: `text/plain; x=一` was
// stored, and every read of it answered 500 (Node refuses such a header value; a trial).
const mediaType = z
  .string()
  .max(255)
  .regex(/^[\w.+-]+\/[\w.+-]+(\s*;[\t\x20-\x7e]*)?$/, 'mediaType must look like type/subtype (parameters in printable ASCII)');
/** At most this many metadata keys per document (and per change). */
export const META_MAX_KEYS = 1000;
const fewKeys = (o: Record<string, unknown>) => Object.keys(o).length <= META_MAX_KEYS;

export const PutMeta = z
  .object({
    /** A name or logical path, e.g. "docs/readme.md" (newPathProblem says which cannot be). */
    path: newPath.optional(),
    mediaType: mediaType.optional(),
    tags: z.array(tag).max(1000).optional(),
    meta: z.record(metaKey, metaValue).refine(fewKeys, `at most ${META_MAX_KEYS} metadata keys`).optional(),
    /**
     * The digest the bytes must have (`sha256:<hex>` or bare hex): on any other, the put
     * fails with DIGEST_MISMATCH and stores nothing reachable. Not recorded.
     */
    expectDigest: z
      .string()
      .regex(/^(sha256:)?[0-9a-fA-F]{64}$/, 'expectDigest must be sha256:<64 hex> or 64 hex digits')
      .transform((d) => `sha256:${d.slice(-64).toLowerCase()}`)
      .optional(),
    /**
     * When the version is of (ISO 8601, ms or a Date; default the commit's time): what a copy
     * from another store keeps (`copyStore`), and imports. Recorded as the version's time.
     */
    time: z
      .union([z.date(), z.string().datetime({ offset: true }), z.number().int().min(0).max(8.64e15)])
      .transform((t) => toMillis(t))
      .optional(),
    /** The version's number, when higher than the path's last (else the next): what a copy keeps. */
    version: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
  })
  .strict();
export type PutMeta = z.input<typeof PutMeta>;

/**
 * `parse(PutMeta, meta)`, without zod for a put that gives no attributes (`put(bytes)`, a
 * snapshot's file): a plain object with no keys, or nothing. Zod's pass over an empty object
 * was ~4 µs of a cold 1 KB put. Anything else goes to zod, which decides and names the error.
 */
export function parsePutMeta(meta: unknown): z.output<typeof PutMeta> {
  if (meta === undefined || meta === null || emptyPlainObject(meta)) return {};
  return parse(PutMeta, meta, 'put meta');
}

function emptyPlainObject(o: unknown): boolean {
  if (typeof o !== 'object' || o === null) return false;
  const proto = Object.getPrototypeOf(o);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const _ in o) return false;
  return true;
}

/**
 * One change of updateMeta, to the entry a path or a digest names (decision 0025: a digest
 * names the document's pathless entry, else the one entry showing it). `meta` values of null
 * delete keys.
 */
export const MetaUpdate = z
  .object({
    digest: z.string().optional(),
    path: docPath.optional(),
    mediaType: mediaType.nullable().optional(),
    meta: z.record(metaKey, metaValue.nullable()).refine(fewKeys, `at most ${META_MAX_KEYS} metadata keys`).optional(),
    addTags: z.array(tag).max(1000).optional(),
    removeTags: z.array(tag).max(1000).optional(),
  })
  .strict()
  .refine((u) => (u.digest === undefined) !== (u.path === undefined), { message: 'name the entry by digest or by path (one of them)', path: ['digest'] });
export type MetaUpdate = z.input<typeof MetaUpdate>;

const CONTROL = /[\u0000-\u001f]/;

const plainTags = (v: unknown) =>
  v === undefined || (Array.isArray(v) && v.length <= 1000 && v.every((t) => typeof t === 'string' && t.length >= 1 && t.length <= 256 && !CONTROL.test(t) && !LONE_SURROGATE.test(t)));

/**
 * Whether MetaUpdate takes `u` exactly as it is (so its output would be `u`'s own fields): a
 * digest or a path, metadata and tags within the limits, no media type. Checked before zod
 * because a batch of 10,000 updates costs more to parse with it than to apply. False is not
 * "invalid": zod decides then, and names the error. A property test holds every `u` this
 * accepts to MetaUpdate accepting it unchanged.
 *
 * Named loads and for-in rather than Object.keys, a Set and `in`: those missed V8's inline
 * caches on every call (a steady-state profile of single updates put ~6% of their time here).
 */
export function plainMetaUpdate(u: unknown): u is MetaUpdate {
  if (typeof u !== 'object' || u === null || Object.getPrototypeOf(u) !== Object.prototype) return false;
  const o = u as { digest?: unknown; path?: unknown; meta?: unknown; addTags?: unknown; removeTags?: unknown };
  const { digest, path, meta, addTags, removeTags } = o;
  // Every key one of the five, none of them undefined: as many keys as defined fields.
  let keys = 0;
  for (const k in o) {
    if (k !== 'digest' && k !== 'path' && k !== 'meta' && k !== 'addTags' && k !== 'removeTags') return false;
    keys++;
  }
  const defined = +(digest !== undefined) + +(path !== undefined) + +(meta !== undefined) + +(addTags !== undefined) + +(removeTags !== undefined);
  if (keys !== defined) return false;
  if (digest === undefined) {
    if (!(typeof path === 'string' && path.length >= 1 && path.length <= 4096 && !path.includes('\u0000'))) return false;
  } else if (typeof digest !== 'string' || path !== undefined) return false;
  if (meta !== undefined) {
    if (typeof meta !== 'object' || meta === null || Object.getPrototypeOf(meta) !== Object.prototype) return false;
    let n = 0;
    for (const k in meta) {
      const v = (meta as Record<string, unknown>)[k];
      if (++n > META_MAX_KEYS || k.length < 1 || k.length > 256 || k === '__proto__' || LONE_SURROGATE.test(k) || !(v === null || (typeof v === 'string' && v.length <= 64 * 1024 && !LONE_SURROGATE.test(v)))) return false;
    }
  }
  return plainTags(addTags) && plainTags(removeTags);
}

/** A time a list or search is bounded by: ISO 8601 (a date alone is its midnight, UTC), ms, or a Date. */
const timeBound = z.union([z.date(), z.string().datetime({ offset: true }), z.string().date(), z.number().int()], {
  error: 'must be an ISO 8601 time (2026-03-14 or 2026-03-14T10:30:00Z), milliseconds since 1970, or a Date',
});

export const ListQuery = z
  .object({
    tag: tag.optional(),
    mediaType: z.string().max(255).optional(),
    pathPrefix: z.string().max(4096).optional(),
    /** Paths starting with one of these (an access limit, decision 0060; with pathPrefix, both hold); []: none. */
    pathPrefixes: z.array(z.string().max(4096)).max(64).optional(),
    since: timeBound.optional(),
    until: timeBound.optional(),
    limit: z.number().int().min(1).max(10_000).default(100),
    cursor: z.string().max(64).optional(),
  })
  .strict();
export type ListQuery = z.input<typeof ListQuery>;

/** Parses with a zod schema; failures become INVALID_INPUT naming the first bad field. */
/**
 * `options` an object (or absent) with none but the `known` keys: a misspelt option was dropped
 * without a word — `deletePath(p, { keepversions: true })` deleted the versions it meant to keep
 * (a library trial). For calls whose options hold functions or signals, which zod is not for.
 */
export function onlyOptions(options: unknown, known: readonly string[] | Readonly<Record<string, OptionKind>>, what: string): void {
  if (options === undefined) return;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) throw new InvalidInputError(`${what} options are an object`, 'options');
  const keys = Array.isArray(known) ? known : Object.keys(known);
  for (const key of Object.keys(options)) if (!keys.includes(key)) throw new InvalidInputError(`${what} has no option ${JSON.stringify(key)} (it knows ${keys.join(', ')})`, key);
  if (Array.isArray(known)) return;
  // (Typed too: `{ listed: "no" }` listed the entry, `{ dryRun: 1 }` would have removed.)
  for (const [key, kind] of Object.entries(known as Record<string, OptionKind>)) {
    const v = (options as Record<string, unknown>)[key];
    if (v !== undefined && !OPTION_KINDS[kind].test(v)) throw new InvalidInputError(`${what}'s option ${key} must be ${OPTION_KINDS[kind].said}`, key);
  }
}

/** What an option may be (onlyOptions). */
export type OptionKind = 'boolean' | 'function' | 'string' | 'count' | 'strings' | 'time';
const OPTION_KINDS: Record<OptionKind, { test: (v: unknown) => boolean; said: string }> = {
  boolean: { test: (v) => typeof v === 'boolean', said: 'true or false' },
  function: { test: (v) => typeof v === 'function', said: 'a function' },
  string: { test: (v) => typeof v === 'string', said: 'a string' },
  count: { test: (v) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0, said: 'a whole number, 0 or more' },
  strings: { test: (v) => Array.isArray(v) && v.every((x) => typeof x === 'string'), said: 'a list of strings' },
  time: { test: (v) => v instanceof Date || typeof v === 'string' || typeof v === 'number', said: 'a Date, an ISO time or milliseconds since 1970' },
};

export function parse<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  // JSON.parse makes `__proto__` an own key, and zod's records drop it without a word (metadata
  // given with it was stored as if it had not been): refused, named.
  const proto = protoKeyAt(value, 3);
  if (proto !== undefined) {
    const field = proto ? `${proto}` : what;
    throw new InvalidInputError(`${what.includes('[') ? `${what}.${field}` : field}: the key "__proto__" is not accepted`, field);
  }
  const r = schema.safeParse(value ?? {});
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const field = issue.path.length ? issue.path.join('.') : what;
  // The field as people name it (`tags`, not `tags.0`), and zod's own wording made plainer
  // ("Too small: expected number to be >=1" -> "must be at least 1").
  // (An item of a batch keeps its place: `updates[3].addTags`.)
  const named = issue.path.filter((p) => typeof p === 'string').join('.') || what;
  throw new InvalidInputError(`${what.includes('[') && named !== what ? `${what}.${named}` : named}: ${plainer(issue.message)}`, field);
}

/** Where an own `__proto__` key is in `value` (its parents' keys, dot-joined), looking `depth` objects down. */
function protoKeyAt(value: unknown, depth: number): string | undefined {
  if (depth === 0 || typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) return undefined;
  if (Object.hasOwn(value, '__proto__')) return '';
  for (const [k, v] of Object.entries(value)) {
    const below = protoKeyAt(v, depth - 1);
    if (below !== undefined) return below ? `${k}.${below}` : k;
  }
  return undefined;
}

function plainer(message: string): string {
  return message
    .replace(/^Too small: expected (?:number|array|string) to (?:be|have) >=?(\d+)(?: (characters|items))?$/, (_, n: string, unit?: string) => (unit ? `must have at least ${n} ${unit}` : `must be at least ${n}`))
    .replace(/^Too big: expected (?:number|array|string) to (?:be|have) <=?(\d+)(?: (characters|items))?$/, (_, n: string, unit?: string) => (unit ? `must have at most ${n} ${unit}` : `must be at most ${n}`));
}

export function toMillis(t: Date | string | number): number {
  return t instanceof Date ? t.getTime() : typeof t === 'string' ? Date.parse(t) : t;
}

/**
 * A condition that `column` starts with one of `prefixes` (ranges the path index serves; an
 * empty list holds for nothing). NULL paths (puts without one) start with nothing.
 */
export function prefixesSql(column: string, prefixes: readonly string[]): { sql: string; params: string[] } {
  if (prefixes.length === 0) return { sql: '0', params: [] };
  return {
    sql: `(${prefixes.map(() => `(${column} >= ? AND ${column} < ?)`).join(' OR ')})`,
    params: prefixes.flatMap((p) => [p, `${p}\u{10ffff}`]),
  };
}

/** SQL conditions (on `entries e`) and their parameters for the shared filters of list and search. */
export function entryFilters(q: {
  tag?: string | undefined;
  mediaType?: string | undefined;
  pathPrefix?: string | undefined;
  pathPrefixes?: readonly string[] | undefined;
  since?: Date | string | number | undefined;
  until?: Date | string | number | undefined;
}): { where: string[]; params: (string | number)[] } {
  const where: string[] = [];
  const params: (string | number)[] = [];
  if (q.tag !== undefined) {
    where.push('EXISTS (SELECT 1 FROM tags t WHERE t.entry_id = e.id AND t.tag = ?)');
    params.push(q.tag);
  }
  if (q.mediaType !== undefined) {
    const t = mediaTypesSql([q.mediaType]);
    where.push(t.sql);
    params.push(...t.params);
  }
  if (q.pathPrefix) {
    where.push('e.path >= ? AND e.path < ?');
    params.push(q.pathPrefix, `${q.pathPrefix}\u{10ffff}`);
  }
  if (q.pathPrefixes) {
    const some = prefixesSql('e.path', q.pathPrefixes);
    where.push(some.sql);
    params.push(...some.params);
  }
  if (q.since !== undefined) {
    where.push('e.updated_at >= ?');
    params.push(toMillis(q.since));
  }
  if (q.until !== undefined) {
    where.push('e.updated_at < ?');
    params.push(toMillis(q.until));
  }
  return { where, params };
}
