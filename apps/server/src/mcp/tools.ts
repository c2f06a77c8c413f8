/**
 * The tools Kura gives an AI assistant over MCP — `kura mcp` (stdio) and `/mcp` on `kura serve`
 * (Streamable HTTP) alike (issues 22, 48, 49): add text or a file, read a document (by
 * characters or lines, within a budget) or several (a prefix or a glob), list paths, search
 * (keyword, semantic, hybrid; through versions and snapshots), grep the stored text, read a
 * path's versions and diff two of them, tag, set metadata, delete — each with MCP's
 * annotations. Results are bounded (RESULT_CHARS of JSON at most, never cut inside it); a Kura error
 * is a tool error whose text starts with its code (`NOT_FOUND: …`) and whose `_meta.code`
 * carries it.
 *
 * What a client is offered follows what it may do (`ToolAccess`): a read token sees the
 * read-only tools alone, and `kura_add_file` — a file on the machine running Kura — is offered
 * only where client and store share that machine (stdio), never over the network.
 */
import { realpathSync, statSync, type Stats } from 'node:fs';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { InvalidInputError, isKuraError } from '@kura/core';
import { createTwoFilesPatch } from 'diff';
import picomatch from 'picomatch';
import { NotFoundError, SEARCH_WAIT_MS, SourceChangedError, detectMediaType, hasLoneSurrogate, looksLikeText, parseQuery, parseRef, textAsUtf8, type PutResult, type Store } from '@kura/store';
import { z } from 'zod';
import type { Scope } from '../config.js';
import { HttpError, forScopes } from '../errors.js';
import { NamedPath, SafePath } from '../schemas.js';
import { FIELDS_CHARS, fitJson, jsonLength, shownFields } from './bounds.js';

/** What the client may do: its token's scopes and prefixes, and whether it may name files on this machine. */
export interface ToolAccess {
  scopes: ReadonlySet<Scope>;
  /** The path prefixes its token reaches (decision 0060): the tools get the store as they see it (access/limited-store.ts). */
  prefixes?: readonly string[];
  /** `kura_add_file`: only for a client on this machine (stdio). */
  localFiles: boolean;
}

/** The scope a tool needs, by its annotations: reading, removing (destructive), or adding. */
function scopeOf(annotations: ToolAnnotations | undefined): Scope {
  return annotations?.readOnlyHint ? 'read' : annotations?.destructiveHint ? 'delete' : 'write';
}

/** Everything: a client on this machine with the store open (`kura mcp`). */
export const LOCAL_ACCESS: ToolAccess = { scopes: new Set<Scope>(['read', 'write', 'delete', 'admin']), localFiles: true };

/** Characters one tool result (its JSON text) takes at most. */
export const RESULT_CHARS = 64 * 1024;
/**
 * Characters of document text one result carries at most, counted as its JSON writes them
 * (mcp/bounds.ts): the rest of RESULT_CHARS is for the fields around it.
 */
export const TEXT_CHARS = RESULT_CHARS - 4096;
/** Characters of JSON each kura_list item's tags and metadata take at most (bounds.ts shownFields). */
const LIST_FIELDS_CHARS = 1024;
/** What a kura_multi_get entry takes besides its path and text: its digest and field names. */
const ENTRY_CHARS = 128;
/** Documents a diff reads at most (each side, whole). */
const DIFF_BYTES_MAX = 4 << 20;
/** Time a diff may take (in steps between which other requests run): then it is given up. */
const DIFF_MS = 2000;

const fatal = new TextDecoder('utf-8', { fatal: true });

/** Bytes read at most to answer a line range (its lines must lie in the document's first 16 MiB). */
const LINES_READ_MAX = 16 << 20;

/** `bytes` without a UTF-8 character cut at its end (when more follows), so that decoding is fair. */
function cutAtCharacter(bytes: Uint8Array, moreFollows: boolean): Uint8Array {
  if (!moreFollows) return bytes;
  let end = bytes.length;
  // Step back over continuation bytes to the start of the last character; drop it if incomplete.
  let k = end - 1;
  while (k >= 0 && k > end - 4 && (bytes[k]! & 0xc0) === 0x80) k--;
  if (k >= 0) {
    const b = bytes[k]!;
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    if (end - k < need) end = k;
  }
  return bytes.subarray(0, end);
}

function result(value: object): CallToolResult {
  const text = JSON.stringify(value, null, 1);
  return { content: [{ type: 'text', text: text.length <= RESULT_CHARS ? text : shortened(value as Record<string, unknown>) }] };
}

/**
 * An answer too long for a result, made to fit: its list (search hits, grep lines, versions:
 * lists no cursor goes on from — tools with a cursor bound themselves) cut from its end, and
 * `cut` saying how much is shown; failing that, a note to ask for less. Always valid JSON.
 */
function shortened(value: Record<string, unknown>): string {
  const key = Object.keys(value).find((k) => Array.isArray(value[k]));
  if (key) {
    const items = value[key] as unknown[];
    const form = (n: number) => JSON.stringify({ ...value, [key]: items.slice(0, n), cut: { list: key, shown: n, of: items.length } }, null, 1);
    // The most items that fit (binary search: each try serialises the answer once).
    let lo = 0;
    let hi = items.length;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (form(mid).length <= RESULT_CHARS) lo = mid;
      else hi = mid - 1;
    }
    const text = form(lo);
    if (text.length <= RESULT_CHARS) return text;
  }
  return JSON.stringify({ cut: true, note: `the answer exceeded ${RESULT_CHARS} characters: ask for less (a smaller limit, budget or range)` });
}

/**
 * Runs a tool's work; a Kura error (from whichever copy of @kura/core: the kura bundle has its
 * own), or a refusal of a token's limits, becomes a tool error carrying its code.
 */
async function tool(access: ToolAccess, work: () => Promise<object>): Promise<CallToolResult> {
  try {
    return result(await work());
  } catch (raw) {
    const e = forScopes(raw, access.scopes); // (AMBIGUOUS lists paths only to a reader)
    if (isKuraError(e) || e instanceof HttpError) return { isError: true, content: [{ type: 'text', text: `${e.code}: ${e.message}` }], _meta: { code: e.code } };
    throw e; // a bug: the SDK reports it as an error too
  }
}

/** An entry's tags and metadata for an answer, each left out when empty, within `room` (bounds.ts shownFields). */
function fieldsOf(tags: string[], meta: Record<string, string>, room: number): { tags?: string[]; meta?: Record<string, string>; fieldsCut?: true } {
  const shown = shownFields(tags, meta, room);
  return { ...(shown.tags.length ? { tags: shown.tags } : {}), ...(Object.keys(shown.meta).length ? { meta: shown.meta } : {}), ...(shown.fieldsCut ? { fieldsCut: true as const } : {}) };
}

/**
 * A document that is no UTF-8 text (a PDF, a DOCX) as the text extracted from it, where it has
 * some (`extracted`: which extractor; `size` then counts the text's UTF-8): kura_get answered
 * "not UTF-8 text" for a PDF whose text search and grep read (a trial). Others as they are.
 */
async function asText(store: Store, doc: Opened): Promise<Opened> {
  const head = await doc.range(0, Math.min(doc.about.size, 4096));
  try {
    fatal.decode(cutAtCharacter(head, head.length < doc.about.size));
    return doc;
  } catch {
    const ex = await store.extractedText(doc.about.digest);
    if (ex && ex.status !== 'failed') return inMemory(doc, new TextEncoder().encode(ex.text), { extracted: ex.kind, ...(ex.status === 'capped' ? { extractedNote: ex.note ?? 'cut at the extractor\'s bounds' } : {}) });
    // Text in Latin-1 or Windows-1252 (old notes), read as search and grep read it, as UTF-8:
    // it was "not UTF-8 text" here while search found it (up to SINGLE_BYTE_MAX, read whole).
    if (doc.about.size <= SINGLE_BYTE_MAX && looksLikeText(head)) return inMemory(doc, textAsUtf8(await doc.bytes()), { encoding: 'windows-1252' });
    return doc;
  }
}

/** A single-byte text document kura_get reads whole to give it as UTF-8, at most (bytes). */
const SINGLE_BYTE_MAX = 16 << 20;

/** `doc` as `text` (UTF-8) held in memory: `size` counts the text's bytes; `more` said on it. */
function inMemory(doc: Opened, text: Uint8Array, more: Partial<Opened['about']>): Opened {
  return {
    about: { ...doc.about, size: text.length, ...more },
    bytes: async () => text,
    range: async (start, end) => text.subarray(start, end),
  };
}

/** The document a reference names (openRef), described, and its bytes, each read checked. */
interface Opened {
  about: { digest: string; path: string | null; size: number; mediaType: string | null; version?: number; tags?: string[]; meta?: Record<string, string>; fieldsCut?: true; snapshot?: string; extracted?: string; extractedNote?: string; encoding?: string };
  bytes(): Promise<Uint8Array>;
  range(start: number, end: number): Promise<Uint8Array>;
}

/**
 * The document `ref` names: a path (its latest version), `path@N` or `path@<ISO time>` (an
 * older version, named by the path and its number), a digest (any document the store holds —
 * one several paths show, or one only a snapshot keeps: its bytes are the same whichever names
 * it), or, with `snapshot`, the file at that path in the snapshot (what `kura_search` with
 * `snapshot` finds). A token limited to prefixes reaches digests under them only, and no
 * snapshot (access/limited-store.ts).
 */
async function openRef(store: Store, given: string, snapshot?: string): Promise<Opened> {
  const ref = snapshot === undefined ? asDigest(given) : given;
  let digest = ref;
  let named: { path?: string; version?: number; snapshot?: string; mediaType?: string | null; entry?: { tags: string[]; meta: Record<string, string> } } = {};
  if (snapshot !== undefined) {
    digest = (await store.snapshotFile(snapshot, checkedPath(ref, 'ref'))).digest;
    named = { path: ref, snapshot };
  } else if (!ref.startsWith('sha256:')) {
    const { path, which } = parseRef(checkedRef(ref, 'ref'));
    if (which.version === undefined && which.at === undefined) {
      const info = await store.stat(path);
      digest = info.digest;
      // The latest version, with the entry's tags and metadata (no read tool showed those).
      named = { path, version: info.version ?? undefined, mediaType: info.mediaType, entry: { tags: info.tags, meta: info.meta } };
    } else {
      const v = await store.pathVersion(path, which);
      digest = v.digest;
      named = { path, version: v.version };
    }
  }
  const doc = await store.document(digest, { unlisted: true });
  const path = named.path ?? doc.path ?? null;
  const entry = named.entry;
  const mediaType = named.mediaType ?? doc.mediaType ?? (path ? detectMediaType(path) : undefined) ?? null;
  return {
    about: {
      digest: doc.digest,
      path,
      size: doc.size,
      mediaType,
      ...(named.version === undefined ? {} : { version: named.version }),
      ...(entry ? fieldsOf(entry.tags, entry.meta, FIELDS_CHARS) : {}),
      ...(snapshot === undefined ? {} : { snapshot }),
    },
    bytes: () => doc.bytes(),
    range: async (start, end) => {
      const out = new Uint8Array(end - start);
      let at = 0;
      for await (const piece of doc.range(start, end)) {
        out.set(piece, at);
        at += piece.length;
      }
      return out;
    },
  };
}

/**
 * A path as HTTP takes it (relative, no empty, `.` or `..` segments: schemas.ts SafePath) or
 * INVALID_INPUT, as HTTP answers it: `public/../secret/s.txt` was NOT_FOUND to kura_get, and
 * kura_delete answered it `deleted: false` as if it were a path.
 */
function checkedPath(path: string, field: string): string {
  // (Naming a path the store may hold: NamedPath, which a file name's control characters pass.)
  const r = NamedPath.safeParse(path);
  if (!r.success) throw new InvalidInputError(`${JSON.stringify(path)} is not a path a document can have: ${r.error.issues[0]!.message}`, field);
  return path;
}

/**
 * A path a put may store under (schemas.ts SafePath: what HTTP stores under), or INVALID_INPUT
 * with the rule it breaks. Checked here, not in the tool's schema: the SDK answered a schema's
 * refusal as a protocol error (-32602) without the code every other tool's answer carries.
 */
function storablePath(path: string, field: string): string {
  const r = SafePath.safeParse(path);
  if (!r.success) throw new InvalidInputError(`${JSON.stringify(path)} is not a path a document can have: ${r.error.issues[0]!.message}`, field);
  return path;
}

/** A reference whose path (`path`, `path@N`, `path@<time>`) is one a document can have; a digest as it is. */
function checkedRef(ref: string, field: string): string {
  if (!ref.startsWith('sha256:')) checkedPath(parseRef(ref).path, field);
  return ref;
}

/**
 * A digest as the CLI takes one: `sha256:` and 64 hex digits in either case, or the 64 hex
 * digits alone (kura_get read bare hex as a path, and refused upper case).
 */
function asDigest(ref: string): string {
  const m = /^(?:sha256:)?([0-9a-f]{64})$/i.exec(ref);
  return m ? `sha256:${m[1]!.toLowerCase()}` : ref;
}

/**
 * A put's answer: its digest and size, and — to a client that may read — the path's version
 * after it (`unchanged`: the latest already held these bytes, no version made). Read from the
 * put itself (PutResult.version): asked afterwards, with other writers at once, several were
 * told they had made the one version (eight puts of one text: five, a trial). A write-only
 * token is told nothing of the entry: `unchanged` answered whether its guess was the path's text.
 */
function putAnswer(access: ToolAccess, r: PutResult, path: string): object {
  const put = { digest: r.digest, path, size: r.size };
  if (!access.scopes.has('read') || r.version === undefined) return put;
  return { ...put, version: r.version, ...(r.versionMade ? {} : { unchanged: true }) };
}

/**
 * Applies a tag or metadata change to the entry `ref` names (a path or a digest), and answers
 * it as it is now — to a client that may read. The entry is an answer to read (as HTTP's PATCH
 * answers 204 to a write-only token): an empty change made kura_tag and kura_meta a lookup of
 * any path's tags and metadata (a trial).
 */
async function update(store: Store, access: ToolAccess, given: string, change: { addTags?: string[]; removeTags?: string[]; meta?: Record<string, string | null> }): Promise<{ path?: string | null; digest?: string; tags?: string[]; meta?: Record<string, string> }> {
  const ref = asDigest(given);
  checkedRef(ref, 'ref');
  // `path@N` names a version here too, and a version has no tags of its own: said, not read
  // as a path of that name (it tagged a literal `notes/a.md@1` where one existed).
  const { path, which } = ref.startsWith('sha256:') ? { path: ref, which: {} } : parseRef(ref);
  if (which.version !== undefined || which.at !== undefined) {
    throw new InvalidInputError(`${ref} names a version: tags and metadata belong to the path, with all its versions (name ${path})`, 'ref');
  }
  await store.updateMeta([{ ...(ref.startsWith('sha256:') ? { digest: ref } : { path: ref }), ...change }]);
  return access.scopes.has('read') ? store.stat(ref) : {};
}

const tags = z.array(z.string().min(1).max(256)).max(64).optional().describe('tags for the path');
const meta = z.record(z.string(), z.string()).optional().describe('key/value metadata for the path');
/** How a tool names a document: what `ref` takes wherever a tool reads one. */
const REF = 'a path (notes/a.md: its latest version), path@N (version N), path@<ISO time> (the version latest then), or a digest (sha256:…)';
const ref = z.string().min(1).max(4096).describe(REF);
const prefix = z.string().max(4096).optional().describe('only paths starting with this (notes/ — a folder ends with /)');
const tag = z.string().max(256).optional().describe('only paths with this tag');
/** A time bound as HTTP takes one: ISO 8601, or milliseconds since 1970 as digits. */
const timeBound = (what: string) => z.string().max(64).optional().describe(`${what} this time: ISO 8601 (2026-03-14 or 2026-03-14T10:30:00Z) or milliseconds since 1970`);
const asTime = (t: string | undefined) => (t !== undefined && /^\d{1,15}$/.test(t) ? Number(t) : t);

/**
 * Names an argument a tool does not take, with the one meant where a model's likely slip is
 * known: unknown arguments were ignored, so `kura_get {version: 1}` read the latest version and
 * `kura_tag {tags: […]}` tagged nothing, each answered as a success (a trial).
 */
function slip(tool: string, key: string): string | undefined {
  if (key === 'version') return 'name a version in ref: path@N';
  if (key === 'tags') return tool === 'kura_tag' ? 'kura_tag takes add and remove' : 'the argument is tag';
  if (key === 'pathPrefix') return 'the argument is prefix';
  if (key === 'path') return 'the argument is ref';
  if (key === 'q') return 'the argument is query';
  if (key === 'offset') return 'go on with the cursor';
  return undefined;
}

/**
 * A tool's arguments, refusing any other (see slip) — but those a client adds of its own
 * accord, named with a leading `_` (`_meta`, `_toolCallId`): a refusal there would fail
 * every call of such a client, which the model cannot mend (found in review). Advertised so:
 * no other property, any named with a leading `_` (the loose object alone advertised
 * `additionalProperties: {}`, "anything goes", while other arguments were refused: a trial).
 */
function strictArguments(tool: string, shape: z.ZodRawShape): z.ZodType {
  return z
    .looseObject(shape)
    .superRefine((args, ctx) => {
      const unknown = Object.keys(args).filter((k) => !(k in shape) && !k.startsWith('_'));
      if (unknown.length === 0) return;
      const known = Object.keys(shape).join(', ') || 'none';
      ctx.addIssue({ code: 'custom', message: `not an argument of this tool: ${unknown.map((k) => (slip(tool, k) ? `${k} (${slip(tool, k)})` : k)).join(', ')}; it takes ${known}` });
    })
    .meta({ additionalProperties: false, patternProperties: { '^_': {} } });
}

/** The scope each of Kura's tools needs (filled as they are registered): for refusals' reasons. */
const TOOL_SCOPES = new Map<string, Scope>();

/**
 * Why `access` may not call Kura's tool `name` (undefined: it may, or there is no such tool).
 * Such a tool is not offered (tools/list), and a call of it was answered by the SDK's "Tool
 * kura_add_text not found" — which told an assistant holding a read token nothing it could act
 * on; routes/mcp.ts answers with this instead.
 */
export function toolRefusal(name: string, access: ToolAccess): string | undefined {
  const scope = TOOL_SCOPES.get(name);
  if (scope === undefined) return undefined;
  if (!access.scopes.has(scope)) return `${name} needs a token with the ${scope} scope; this one has ${[...access.scopes].sort().join(', ') || 'none'}`;
  if (name === 'kura_add_file' && !access.localFiles) return 'kura_add_file names a file on the server\'s machine: only a client on that machine (kura mcp) may call it; send the text with kura_add_text';
  if (name === 'kura_snapshots' && access.prefixes) return 'snapshots are store-wide: a token limited to path prefixes reaches none';
  return undefined;
}

export function registerTools(mcp: McpServer, store: Store, access: ToolAccess): void {
  // A tool the client may not use is not offered at all: tools/list shows what it can call.
  const server: Pick<McpServer, 'registerTool'> = {
    registerTool: (name, config, cb) => {
      const shape = config.inputSchema as z.ZodRawShape | undefined;
      const tool = mcp.registerTool(name, { ...config, ...(shape ? { inputSchema: strictArguments(name, shape) as unknown as typeof config.inputSchema } : {}) }, cb);
      TOOL_SCOPES.set(name, scopeOf(tool.annotations));
      // (Snapshots are store-wide: a token limited to prefixes reaches none — decision 0060.)
      if (toolRefusal(name, access)) tool.remove();
      return tool;
    },
  };
  server.registerTool(
    'kura_add_text',
    {
      title: 'Add text',
      description: 'Store text in Kura, at a path (like a file name) if given; the same text is stored once. Answers its digest.',
      inputSchema: {
        text: z
          .string()
          .max(16 << 20)
          .refine((t) => Buffer.byteLength(t) <= 16 << 20, 'text must be at most 16 MiB of UTF-8')
          // A lone surrogate has no UTF-8: it was stored as U+FFFD, under a digest of bytes the
          // caller never sent (paths refuse it already).
          .refine((t) => !hasLoneSurrogate(t), 'text must be well-formed Unicode (it holds a lone surrogate, which has no UTF-8)')
          .describe('the text to store (at most 16 MiB of UTF-8)'),
        path: z.string().min(1).max(4096).optional().describe('where it goes, like a file name (notes/today.md: relative, no empty, "." or ".." parts); the same path again makes a new version'),
        mediaType: z.string().max(255).optional().describe('default: from the path\'s name, else text/plain'),
        tags,
        meta,
      },
      // The same bytes at the same path make no new version: idempotent; nothing is overwritten.
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
    },
    ({ text, path, mediaType, tags: t, meta: m }) =>
      tool(access, async () => {
        // Typed as `kura add` and HTTP type what they store: by the path's name (notes.md is
        // Markdown, a.json JSON), else plain text.
        const type = mediaType ?? (path ? detectMediaType(path) : undefined) ?? 'text/plain';
        const r = await store.put(new TextEncoder().encode(text), { ...(path ? { path: storablePath(path, 'path') } : {}), mediaType: type, ...(t ? { tags: t } : {}), ...(m ? { meta: m } : {}) });
        if (!path) return { digest: r.digest, path: null, size: r.size };
        return putAnswer(access, r, path);
      }),
  );
  server.registerTool(
    'kura_add_file',
    {
      title: 'Add a file',
      description: 'Store a file from this machine (PDF, Word and HTML documents are searched by their text). `path` is where it goes in Kura (default: its name).',
      inputSchema: { file: z.string().min(1).max(4096).describe('the file on this machine (an absolute path is safest)'), path: z.string().min(1).max(4096).optional().describe("where it goes in Kura, like a file name (default: the file's name; relative, no empty, \".\" or \"..\" parts); the same path again makes a new version"), tags, meta },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
    },
    ({ file, path, tags: t, meta: m }) =>
      tool(access, async () => {
        const at = path ?? file.split(/[\\/]/).pop()!;
        // (Paths as HTTP takes them: relative, no empty, "." or ".." segments.)
        if (path !== undefined) storablePath(path, 'path');
        else if (!SafePath.safeParse(at).success) throw new InvalidInputError(`${JSON.stringify(at)} is not a path a document can have: give one with \`path\``, 'path');
        // As `kura add` puts a file: streamed on a worker (a put of the path held it whole), a
        // regular file only (/dev/zero never ended), typed by its name, then its bytes.
        let stat: Stats;
        try {
          stat = statSync(file);
        } catch (e) {
          throw new InvalidInputError(`${file}: ${(e as Error).message.replace(/^[A-Z]+: /, '')}`, 'file');
        }
        if (!stat.isFile()) throw new InvalidInputError(`${file} is not a regular file (a ${stat.isDirectory() ? 'directory' : 'device, pipe or socket'}): give a file`, 'file');
        const type = detectMediaType(at);
        const meta = { path: at, ...(type ? { mediaType: type } : {}), ...(t ? { tags: t } : {}), ...(m ? { meta: m } : {}) };
        // A file that changes while it is read is read again, never stored as a mix of its old
        // and new bytes (as `kura add`: three reads at most). The workers read a file without
        // following a link: its target is named.
        const source = realpathSync(file);
        for (let tries = 1; tries <= ADD_FILE_READS; tries++) {
          for await (const o of store.putFiles([{ path: source, meta }], { workers: 1, refuseChanged: true, heldOpen: 'read' })) {
            if (o.error === undefined) return putAnswer(access, o.result!, at);
            // (By its code and field: the kura bundle may hold another copy of the class.)
            if (isKuraError(o.error) && o.error.code === 'INVALID_INPUT' && (o.error as { field?: string }).field === 'source') continue;
            const errno = (o.error as NodeJS.ErrnoException).code;
            if (isKuraError(o.error) || !errno) throw o.error;
            throw new InvalidInputError(`${file}: ${(o.error as Error).message.replace(/^[A-Z]+: /, '')}`, 'file');
          }
        }
        throw new SourceChangedError(`${file} changed while it was read, ${ADD_FILE_READS} times: not stored (what was read mixed its old and new bytes); add it again once it is written`);
      }),
  );
  server.registerTool(
    'kura_get',
    {
      title: 'Read a document',
      description: `A document's text by path, path@version, digest, or the path of a file in a \`snapshot\` (as kura_search with \`snapshot\` names it): from \`offset\` (bytes of its UTF-8; an offset inside a character starts at the next one) or lines \`fromLine\`..\`toLine\` (from 1), at most \`maxChars\` (default and cap ${TEXT_CHARS}; counted as JSON writes them: a newline or quote counts two). A cut answer says \`more\` and where to go on (\`next\`). A PDF or DOCX is read as the text extracted from it (\`extracted\` says so; offsets and lines are the text's); another binary document is described, not returned.`,
      inputSchema: {
        ref,
        offset: z.number().int().min(0).optional().describe("where to start, in bytes of the document's UTF-8 (an answer's next.offset)"),
        fromLine: z.number().int().min(1).optional().describe('the first line to read (from 1); not with offset'),
        toLine: z.number().int().min(1).optional().describe('the last line to read'),
        maxChars: z.number().int().min(1).max(TEXT_CHARS).optional().describe(`characters of text at most (default and cap ${TEXT_CHARS})`),
        snapshot: z.string().max(64).optional().describe('a snapshot id: `ref` is the path of a file in it'),
      },
      annotations: { readOnlyHint: true },
    },
    ({ ref, offset, fromLine, toLine, maxChars, snapshot }) =>
      tool(access, async () => {
        const doc = await asText(store, await openRef(store, ref, snapshot));
        const { about } = doc;
        // (The text's room is what the description leaves: a long path and metadata take some.)
        const budget = Math.min(maxChars ?? TEXT_CHARS, Math.max(1024, RESULT_CHARS - JSON.stringify(about, null, 1).length - 512));
        const binary = { ...about, text: null, note: 'not UTF-8 text: search finds it by its extracted text, path, tags and metadata' };
        if (fromLine !== undefined && toLine !== undefined && fromLine > toLine) throw new InvalidInputError(`fromLine ${fromLine} is after toLine ${toLine}`, 'fromLine');
        if (offset !== undefined && (fromLine !== undefined || toLine !== undefined)) throw new InvalidInputError('give an offset or a range of lines, not both', 'offset');
        if (fromLine !== undefined || toLine !== undefined) {
          // Lines: read from the start, a bounded amount (the lines asked for within the budget).
          const first = fromLine ?? 1;
          const last = toLine ?? Number.MAX_SAFE_INTEGER;
          const bytes = await doc.range(0, Math.min(about.size, LINES_READ_MAX));
          let text: string;
          try {
            text = fatal.decode(cutAtCharacter(bytes, bytes.length < about.size));
          } catch {
            return binary;
          }
          const lines = text.split('\n');
          // A final newline ends the last line; no empty line follows it (as grep counts). A last
          // line without one is shown without one.
          const whole = bytes.length === about.size;
          if (whole && lines.length > 1 && lines.at(-1) === '') lines.pop();
          const unended = whole && !text.endsWith('\n') ? lines.length : 0;
          const wanted = lines.slice(first - 1, Math.min(last, lines.length));
          let out = '';
          let used = 0;
          let n = first - 1;
          for (const line of wanted) {
            const newline = n + 1 !== unended;
            const width = jsonLength(line) + (newline ? 2 : 0); // and its newline, written \n
            if (used + width > budget) break;
            out += newline ? `${line}\n` : line;
            used += width;
            n++;
          }
          const more = n < Math.min(last, lines.length) || (bytes.length < about.size && last > lines.length);
          return { ...about, fromLine: first, toLine: n, text: out, ...(more ? { more: true, next: { fromLine: n + 1 } } : {}) };
        }
        let from = Math.min(offset ?? 0, about.size);
        let bytes = await doc.range(from, Math.min(about.size, from + 4 * budget));
        // An offset inside a character (a byte offset given by hand) starts at the next one, not
        // at "not UTF-8 text": at most 3 continuation bytes are passed over.
        let skip = 0;
        while (skip < 3 && skip < bytes.length && (bytes[skip]! & 0xc0) === 0x80) skip++;
        if (skip > 0) {
          from += skip;
          bytes = bytes.subarray(skip);
        }
        let text: string;
        try {
          text = fatal.decode(cutAtCharacter(bytes, from + bytes.length < about.size));
        } catch {
          return binary;
        }
        const shown = fitJson(text, budget).text;
        const end = from + new TextEncoder().encode(shown).length;
        return { ...about, offset: from, text: shown, ...(end < about.size ? { more: true, next: { offset: end } } : {}) };
      }),
  );
  server.registerTool(
    'kura_multi_get',
    {
      title: 'Read several documents',
      description: `The text of every path under a prefix or matching a glob (\`notes/**/*.md\`), in the order kura_list lists them (the order the paths were first stored), within a total of \`maxChars\` (default and cap ${TEXT_CHARS}, paths included; counted as JSON writes them); each document at most \`perDocChars\`. When the budget runs out the answer says \`more\` and the \`cursor\` to go on from. PDF and DOCX documents by their extracted text (\`extracted\` says so); other binary documents with text null.`,
      inputSchema: {
        prefix: z.string().max(4096).optional().describe('the paths starting with this (notes/); give this, a glob, or both'),
        glob: z.string().min(1).max(4096).optional().describe('the paths matching this glob (notes/**/*.md; * stays within a folder, ** crosses folders)'),
        maxChars: z.number().int().min(1).max(TEXT_CHARS).optional().describe(`characters of the whole answer at most (default and cap ${TEXT_CHARS})`),
        perDocChars: z.number().int().min(1).max(TEXT_CHARS).optional().describe('characters of each document at most'),
        cursor: z.string().max(64).optional().describe("an answer's cursor: go on from there"),
      },
      annotations: { readOnlyHint: true },
    },
    ({ prefix, glob, maxChars, perDocChars, cursor }) =>
      tool(access, async () => {
        if (prefix === undefined && glob === undefined) throw new InvalidInputError('name the documents: a prefix, a glob, or both', 'prefix');
        let matches: (path: string) => boolean = () => true;
        if (glob) {
          try {
            matches = picomatch(glob, { dot: true, strictBrackets: true });
          } catch (e) {
            throw new InvalidInputError(`not a glob: ${(e as Error).message}`, 'glob');
          }
        }
        // The glob's fixed start narrows the listing (`notes/**/*.md` lists notes/ only).
        const fixed = glob ? glob.slice(0, glob.search(/[*?[{]/) < 0 ? glob.length : glob.search(/[*?[{]/)) : '';
        const pathPrefix = prefix !== undefined && prefix.length >= fixed.length ? prefix : fixed.startsWith(prefix ?? '') ? fixed : (prefix ?? '');
        let left = maxChars ?? TEXT_CHARS;
        const per = Math.min(perDocChars ?? TEXT_CHARS, left);
        const docs: { path: string; digest: string; text: string | null; extracted?: string; cut?: true }[] = [];
        let next = cursor;
        for (;;) {
          const page = await store.list({ ...(pathPrefix ? { pathPrefix } : {}), limit: 100, ...(next ? { cursor: next } : {}) });
          for (const [i, d] of page.items.entries()) {
            if (!d.path || !matches(d.path) || (prefix !== undefined && !d.path.startsWith(prefix))) continue;
            // The entry around the text (its path, digest, field names) counts too.
            const entry = jsonLength(d.path) + ENTRY_CHARS;
            if (docs.length > 0 && left - entry <= 0) {
              // The budget is spent: go on from the item before this one.
              const resume = i === 0 ? next : (await store.list({ ...(pathPrefix ? { pathPrefix } : {}), limit: i, ...(next ? { cursor: next } : {}) })).nextCursor;
              return { docs, more: true, cursor: resume ?? null };
            }
            left -= entry;
            const want = Math.max(0, Math.min(per, left));
            let bytes = await store.getRange(d.digest, 0, Math.min(d.size, 4 * want));
            let size = d.size;
            let text: string | null;
            let extracted: string | undefined;
            try {
              text = fatal.decode(cutAtCharacter(bytes, bytes.length < size));
            } catch {
              // (A PDF or DOCX: the text extracted from it, as kura_get reads it.)
              const ex = await store.extractedText(d.digest);
              text = ex && ex.status !== 'failed' ? ex.text : null;
              extracted = text === null ? undefined : ex!.kind;
              if (text !== null) size = (bytes = new TextEncoder().encode(text)).length;
            }
            const fitted = text === null ? undefined : fitJson(text, want);
            const cut = fitted !== undefined && (fitted.text.length < text!.length || bytes.length < size);
            docs.push({ path: d.path, digest: d.digest, text: fitted?.text ?? null, ...(extracted ? { extracted } : {}), ...(cut ? { cut: true as const } : {}) });
            left -= fitted?.length ?? 0;
          }
          if (!page.nextCursor) return { docs, more: false, cursor: null };
          next = page.nextCursor;
        }
      }),
  );
  server.registerTool(
    'kura_list',
    {
      title: 'List paths',
      description: 'Paths in Kura (with digest, size, media type, latest version and when it was made, tags and metadata), filtered by a path prefix, a tag, a media type or when they last changed, in the order they were first stored; 100 at most, `cursor` for the next page.',
      inputSchema: {
        prefix,
        tag,
        type: z.string().max(255).optional().describe('only this media type, e.g. text/markdown'),
        since: timeBound('changed at or after'),
        until: timeBound('changed before'),
        limit: z.number().int().min(1).max(100).optional().describe('paths at most (default 50)'),
        cursor: z.string().max(64).optional().describe("an answer's nextCursor: the next page"),
      },
      annotations: { readOnlyHint: true },
    },
    ({ prefix, tag, type, since, until, limit, cursor }) =>
      tool(access, async () => {
        // A page too long for a result (long paths, many tags) is asked for again, smaller, so
        // that its cursor goes on from the last item shown.
        for (let n = limit ?? 50; ; n = Math.ceil(n / 2)) {
          const page = await store.list({ ...(prefix ? { pathPrefix: prefix } : {}), ...(tag ? { tag } : {}), ...(type ? { mediaType: type } : {}), ...(since ? { since: asTime(since) } : {}), ...(until ? { until: asTime(until) } : {}), limit: n, ...(cursor ? { cursor } : {}) });
          const answer = { items: page.items.map((d) => ({ path: d.path, digest: d.digest, size: d.size, mediaType: d.mediaType, ...(d.version !== null ? { version: d.version } : {}), updatedAt: d.updatedAt, tags: [] as string[], ...fieldsOf(d.tags, d.meta, LIST_FIELDS_CHARS) })), nextCursor: page.nextCursor ?? null };
          if (n === 1 || JSON.stringify(answer, null, 1).length <= RESULT_CHARS) return answer;
        }
      }),
  );
  server.registerTool(
    'kura_search',
    {
      title: 'Search',
      description:
        'Find documents by a question or words: `hybrid` (the default where an embedding model is in use; else `keyword`) fuses `keyword` (BM25) and `semantic` (by meaning), and the documents holding the identifiers asked for (6.17.0, ERR_REQUIRE_ESM, useEffect) as written (`exact`); `mode` in the answer says which ranked the hits. Any text is a query; operators are honoured where well formed: "a phrase", prefix*, AND, OR, NOT, -word, path:P, tag:T, type:M. Hits are best first, with a snippet (plain text; the words that matched between <mark> and </mark>; text of a document that spells those tags shows as &lt;mark&gt;); the same bytes at several paths are one hit, its other paths in `alsoAt`; `parsedAs` says how the query was read, `fallbacks` what was read as plain words (and misspelt words searched as the nearest ones stored, when nothing matched as typed). Semantic hits below a calibrated similarity are left out (`minScore` to change it). `notEmbedded`, when present: documents added so recently that the semantic side could not see them yet (keyword search sees everything). `allVersions` searches every version, `snapshot` the files of a snapshot (kura_snapshots lists them; read a hit with kura_get and the same `snapshot`).',
      annotations: { readOnlyHint: true },
      inputSchema: { query: z.string().max(65_536).describe('the question or words, as a person would ask (any text is a query)'), mode: z.enum(['keyword', 'semantic', 'hybrid']).optional().describe('keyword (BM25 over words), semantic (by meaning), or hybrid (both, fused); default hybrid where a model is in use'), limit: z.number().int().min(1).max(50).optional().describe('hits at most (default 10)'), offset: z.number().int().min(0).max(100_000).optional().describe('hits to pass over first: offset 10 with limit 10 is the second page'), prefix, tag, type: z.string().max(255).optional().describe('media type, e.g. text/markdown'), since: timeBound('changed at or after'), until: timeBound('changed before'), minScore: z.number().min(-1).max(1).optional().describe('the least cosine similarity a semantic hit needs (default: the calibrated floor; -1 keeps every hit)'), allVersions: z.boolean().optional().describe('every version of each path (by words): hits carry `version`'), snapshot: z.string().max(64).optional().describe("the files of one snapshot (by words): hits name the file's path in it"), collapse: z.boolean().optional().describe('false: a hit for each path holding a document (default true: one hit per document, its other paths in alsoAt)') },
    },
    ({ query, mode, limit, offset, prefix, tag, type, since, until, minScore, allVersions, snapshot, collapse }) =>
      tool(access, async () => {
        const hits = await store.search(query, { limit: limit ?? 10, ...(offset ? { offset } : {}), waitMs: SEARCH_WAIT_MS, ...(mode ? { mode } : {}), ...(prefix ? { pathPrefix: prefix } : {}), ...(tag ? { tag } : {}), ...(type ? { mediaType: type } : {}), ...(since ? { since: asTime(since) } : {}), ...(until ? { until: asTime(until) } : {}), ...(minScore !== undefined ? { minScore } : {}), ...(allVersions ? { allVersions } : {}), ...(snapshot ? { snapshot } : {}), ...(collapse === false ? { collapse } : {}) });
        // Nothing to rank by (only filters, or nothing at all): no hits, and why.
        const wordless = hits.length === 0 && parseQuery(query).expr === null;
        return {
          // A snapshot's hit names its snapshot: what kura_get needs beside the path to read it.
          hits: hits.map((h) => ({ path: h.path, ...(h.version !== undefined ? { version: h.version } : {}), ...(snapshot ? { snapshot } : {}), digest: h.digest, mediaType: h.mediaType, size: h.size, score: h.score, snippet: plainSnippet(h.snippet), ...(h.damaged !== undefined ? { damaged: h.damaged } : {}), matched: h.matched, ...(h.keyword ? { keyword: h.keyword } : {}), ...(h.semantic ? { semantic: h.semantic } : {}), ...(h.exact ? { exact: h.exact } : {}), ...(h.rerank ? { rerank: h.rerank } : {}), ...(h.alsoAt ? { alsoAt: h.alsoAt } : {}), ...(h.alsoAtMore ? { alsoAtMore: h.alsoAtMore } : {}) })),
          ...(hits.mode ? { mode: hits.mode } : {}),
          ...(wordless ? { note: 'no words to search for: search ranks documents by words; kura_list lists by prefix or tag alone' } : {}),
          // (A 64 KiB one-word question echoed whole left no room for a single hit: a trial.)
          parsedAs: hits.parsedAs.length <= PARSED_AS_SHOWN ? hits.parsedAs : `${hits.parsedAs.slice(0, PARSED_AS_SHOWN)}…`,
          ...(hits.fallbacks ? { fallbacks: hits.fallbacks } : {}),
          ...(hits.reranked ? { reranked: hits.reranked } : {}),
          ...(hits.notEmbedded ? { notEmbedded: hits.notEmbedded } : {}),
        };
      }),
  );
  server.registerTool(
    'kura_grep',
    {
      title: 'Grep the stored text',
      description:
        "Lines of the stored text (text files; PDF, DOCX and HTML by their extracted text) that match a regular expression (Rust regex syntax, linear time), with their path and line number: exact strings, names, identifiers — where search ranks by relevance, grep finds every occurrence. Grep reads the latest version of every path (text stored without a path is found by kura_search). At most `limit` lines (default 100); `truncated` says when there were more. A long line is shown around its match, with … on each side it was cut.",
      inputSchema: {
        pattern: z.string().min(1).max(4096).describe('a regular expression (Rust regex syntax: \\b, \\d, (?i) and classes work; no backreferences or lookaround)'),
        prefix,
        tag,
        type: z.string().max(255).optional().describe('only this media type: text/markdown, text/*, or a subtype alone (pdf)'),
        ignoreCase: z.boolean().optional().describe('match regardless of case'),
        word: z.boolean().optional().describe('whole words only: the pattern between word boundaries (grep -w)'),
        context: z.number().int().min(0).max(10).optional().describe('lines of context around each match'),
        filesWithMatches: z.boolean().optional().describe('each file at its first match only (which files hold it: grep -l)'),
        count: z.boolean().optional().describe('no lines: each file holding a match with its count of matching lines (`counts`; grep -c)'),
        onlyMatching: z.boolean().optional().describe('also give each matching line\'s matched texts, every match in it (`matches`; grep -o): to collect values, not lines'),
        limit: z.number().int().min(1).max(500).optional().describe('matching lines at most (default 100)'),
      },
      annotations: { readOnlyHint: true },
    },
    ({ pattern, prefix, tag, type, ignoreCase, word, context, filesWithMatches, count, onlyMatching, limit }) =>
      tool(access, async () => {
        const lines: { path: string; line: number; text: string; match: boolean; matches?: string[]; matchesMore?: number }[] = [];
        const counts: { path: string; matches: number }[] = [];
        let summary: unknown;
        const errors: { path: string; code: string; message: string }[] = [];
        const options = { ignoreCase: ignoreCase ?? false, ...(word ? { word: true } : {}), ...(prefix ? { prefixes: [prefix] } : {}), ...(tag ? { tag } : {}), ...(type ? { type } : {}), ...(filesWithMatches ? { firstPerFile: true } : {}), ...(count ? { count: true } : {}), ...(onlyMatching ? { onlyMatching: true } : {}), context: context ?? 0, limit: limit ?? 100 };
        for await (const e of store.grep(pattern, options)) {
          if (e.type === 'match' || e.type === 'context') lines.push({ path: e.path, line: e.line, text: around(e.text, e.type === 'match' ? e.submatch : undefined, e), match: e.type === 'match', ...(e.type === 'match' && e.matchedTexts ? matchedShown(e.matchedTexts) : {}) });
          else if (e.type === 'end' && count) counts.push({ path: e.path, matches: e.matches });
          else if (e.type === 'error') errors.push({ path: e.path, code: e.code, message: e.message });
          else if (e.type === 'summary') summary = e;
        }
        return { ...(count ? { counts } : { lines }), ...(errors.length ? { errors } : {}), summary };
      }),
  );
  server.registerTool(
    'kura_diff',
    {
      title: 'Compare two versions',
      description: 'A unified text diff of two documents — typically `path@1` and `path@2`, or a path and one of its versions (refs as for kura_get). Bounded: a diff longer than the result cap is cut, and says so.',
      inputSchema: { from: ref.describe(`the older side: ${REF}`), to: ref.describe(`the newer side: ${REF}`), context: z.number().int().min(0).max(20).optional().describe('unchanged lines shown around each change (default 3)') },
      annotations: { readOnlyHint: true },
    },
    ({ from, to, context }) =>
      tool(access, async () => {
        const read = async (ref: string) => {
          const doc = await openRef(store, ref);
          if (doc.about.size > DIFF_BYTES_MAX) throw new InvalidInputError(`${ref} is ${doc.about.size} bytes: diffs are of documents up to ${DIFF_BYTES_MAX} bytes`, 'ref');
          try {
            return fatal.decode(await doc.bytes());
          } catch (e) {
            if (isKuraError(e)) throw e;
            throw new InvalidInputError(`${ref} is not UTF-8 text`, 'ref');
          }
        };
        const [a, b] = [await read(from), await read(to)];
        // Myers' diff costs the lines times the edits: two unrelated texts of 20,000 lines took
        // 14 s, on the thread every client of a server shares. Computed a step per turn of the
        // event loop, and given up past DIFF_MS.
        const patch = await new Promise<string | undefined>((resolve) => {
          createTwoFilesPatch(from, to, a, b, undefined, undefined, { context: context ?? 3, timeout: DIFF_MS, callback: resolve });
        });
        if (patch === undefined) {
          return { from, to, diff: null, note: `the two texts differ in too many places to diff within ${DIFF_MS / 1000} s: read them with kura_get (a range of lines each)` };
        }
        const shown = fitJson(patch, TEXT_CHARS).text;
        return { from, to, diff: shown, ...(shown.length < patch.length ? { cut: true } : {}) };
      }),
  );
  server.registerTool(
    'kura_tag',
    {
      title: 'Tag a path',
      description: 'Adds and removes tags of a path (or of the entry a digest names).',
      inputSchema: { ref: z.string().min(1).max(4096).describe('a path, or a digest (the entry showing it)'), add: z.array(z.string().min(1).max(256)).max(64).optional().describe('tags to add'), remove: z.array(z.string().min(1).max(256)).max(64).optional().describe('tags to remove') },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
    },
    ({ ref, add, remove }) => tool(access, async () => {
      const { path, digest, tags: now } = await update(store, access, ref, { ...(add ? { addTags: add } : {}), ...(remove ? { removeTags: remove } : {}) });
      return now === undefined ? { ref, updated: true } : { path, digest, tags: [] as string[], ...fieldsOf(now, {}, RESULT_CHARS / 2) };
    }),
  );
  server.registerTool(
    'kura_meta',
    {
      title: 'Set metadata of a path',
      description: 'Sets key/value metadata of a path (a value of null removes the key).',
      inputSchema: { ref: z.string().min(1).max(4096).describe('a path, or a digest (the entry showing it)'), meta: z.record(z.string(), z.string().nullable()).describe('keys to set to values; a key set to null is removed; other keys stay') },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
    },
    ({ ref, meta: m }) => tool(access, async () => {
      const { path, digest, meta: now } = await update(store, access, ref, { meta: m });
      return now === undefined ? { ref, updated: true } : { path, digest, meta: {}, ...fieldsOf([], now, RESULT_CHARS / 2) };
    }),
  );
  server.registerTool(
    'kura_delete',
    {
      title: 'Delete a path',
      description: 'Deletes a path and its versions (its bytes go at the next GC when nothing else names them). Cannot be undone.',
      inputSchema: { path: z.string().min(1).max(4096).describe('the path (notes/a.md), not a version') },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    },
    ({ path }) =>
      tool(access, async () => {
        if (await store.deletePath(checkedPath(path, 'path'))) return { path, deleted: true };
        // Nothing at that path: say why when it names a version (a version is not deleted alone).
        const { which } = parseRef(path);
        const note = which.version !== undefined || which.at !== undefined ? 'that names a version: kura_delete deletes a path with all its versions (versions are not deleted one by one here)' : 'no path of that name';
        return { path, deleted: false, note };
      }),
  );
  server.registerTool(
    'kura_snapshots',
    {
      title: 'List snapshots',
      description: 'The snapshots of folders taken into Kura (kura snapshot), newest first: id, label, when, how many files and bytes, tags. Search one with kura_search and `snapshot`; read its files with kura_get and `snapshot`.',
      inputSchema: {
        label: z.string().max(256).optional().describe('only snapshots with this label'),
        limit: z.number().int().min(1).max(200).optional().describe('snapshots at most (default 50, newest first)'),
      },
      annotations: { readOnlyHint: true },
    },
    ({ label, limit }) =>
      tool(access, async () => {
        const all = (await store.snapshots()).filter((s) => label === undefined || s.label === label).reverse();
        const shown = all.slice(0, limit ?? 50);
        return { snapshots: shown.map((s) => ({ id: s.id, label: s.label, createdAt: s.createdAt, files: s.files, bytes: s.bytes, ...(s.tags.length ? { tags: s.tags } : {}), ...(s.pinned ? { pinned: true } : {}) })), ...(shown.length < all.length ? { more: all.length - shown.length } : {}) };
      }),
  );
  server.registerTool(
    'kura_versions',
    {
      title: 'Versions of a path',
      description: `Every version of a path, oldest first: its number, digest, size and time; read one with kura_get and \`path@N\`. At most the newest ${VERSIONS_SHOWN}: \`cut\` says how many there are when older ones were left out.`,
      inputSchema: { path: z.string().min(1).max(4096).describe('the path (notes/a.md)') },
      annotations: { readOnlyHint: true },
    },
    ({ path }) =>
      tool(access, async () => {
        const all = await store.versions(checkedPath(path, 'path'));
        // A path never stored is NOT_FOUND, as `kura versions` says (an empty list read as "no versions yet").
        if (all.length === 0) throw new NotFoundError(`no versions of ${path}: nothing is stored at that path (never stored, or deleted with its versions; kura_list lists the paths under a prefix)`);
        const versions = all.slice(-VERSIONS_SHOWN);
        return { versions, ...(versions.length < all.length ? { cut: { list: 'versions', shown: versions.length, of: all.length, kept: 'newest' } } : {}) };
      }),
  );
}

const ENTITY: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };

/**
 * A snippet as text for a model: search answers snippets as HTML fragments (escaped, for a
 * page), and an assistant quoting `if (a &lt; b)` or a password with `&#39;` quoted it wrong.
 * The marks stay, as the tool's description says — and a document's own `<mark>` or `</mark>`
 * stays escaped (`&lt;mark&gt;`): unescaped, text that spells the tags read as a match (a trial).
 */
function plainSnippet(html: string): string {
  return html.replace(/&lt;\/?mark&gt;|&(?:amp|lt|gt|quot|#39);/gi, (e) => ENTITY[e] ?? e);
}

/** Versions a kura_versions answer lists at most (the newest). */
const VERSIONS_SHOWN = 200;
/** Characters of a search's `parsedAs` shown at most. */
const PARSED_AS_SHOWN = 2000;
/** Characters of a grep line a kura_grep answer shows at most. */
const GREP_LINE_SHOWN = 500;
/** Reads of a file kura_add_file makes at most while it changes as it is read. */
const ADD_FILE_READS = 3;
/** A line's matched texts shown at most (kura_grep's `onlyMatching`); `matchesMore` counts the rest. */
const GREP_MATCHES_SHOWN = 100;

/** A line's matched texts for kura_grep: each cut as a line is, at most GREP_MATCHES_SHOWN. */
function matchedShown(texts: string[]): { matches: string[]; matchesMore?: number } {
  const matches = texts.slice(0, GREP_MATCHES_SHOWN).map((t) => (t.length <= GREP_LINE_SHOWN ? t : `${t.slice(0, GREP_LINE_SHOWN)}…`));
  return texts.length > GREP_MATCHES_SHOWN ? { matches, matchesMore: texts.length - GREP_MATCHES_SHOWN } : { matches };
}

/**
 * A grep line cut to GREP_LINE_SHOWN characters around its match (a long line's start seldom
 * holds it), marked `…` on each side something is left out of — here, or by the store already.
 */
function around(text: string, submatch: [number, number] | undefined, cut: { cutBefore?: number; cutAfter?: number }): string {
  const from = text.length <= GREP_LINE_SHOWN ? 0 : submatch ? Math.max(0, Math.min(submatch[0] - GREP_LINE_SHOWN / 4, text.length - GREP_LINE_SHOWN)) : 0;
  const to = Math.min(text.length, from + GREP_LINE_SHOWN);
  return `${from > 0 || cut.cutBefore ? '…' : ''}${text.slice(from, to)}${to < text.length || cut.cutAfter ? '…' : ''}`;
}
