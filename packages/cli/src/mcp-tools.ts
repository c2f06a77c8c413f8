/**
 * The tools `kura mcp` gives an AI assistant (issue 22): add text or a file, read a document,
 * list paths, search (keyword, semantic, hybrid), grep the stored text and read a path's versions. Results are
 * bounded (RESULT_CHARS of text at most, lists capped); a Kura error is a tool error whose
 * text starts with its code (`NOT_FOUND: …`) and whose `_meta.code` carries it.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { KuraError } from '@kura/core';
import { SEARCH_WAIT_MS, type Store } from '@kura/store';
import { z } from 'zod';

/** Characters of text one tool result carries at most (a document read is cut, and says so). */
export const RESULT_CHARS = 64 * 1024;

const fatal = new TextDecoder('utf-8', { fatal: true });

function result(value: unknown): CallToolResult {
  let text = JSON.stringify(value, null, 1);
  if (text.length > RESULT_CHARS) text = `${text.slice(0, RESULT_CHARS)}… (cut at ${RESULT_CHARS} characters)`;
  return { content: [{ type: 'text', text }] };
}

/** Runs a tool's work; a KuraError becomes a tool error carrying its code. */
async function tool(work: () => Promise<unknown>): Promise<CallToolResult> {
  try {
    return result(await work());
  } catch (e) {
    if (e instanceof KuraError) return { isError: true, content: [{ type: 'text', text: `${e.code}: ${e.message}` }], _meta: { code: e.code } };
    throw e; // a bug: the SDK reports it as an error too
  }
}

const tags = z.array(z.string().min(1).max(256)).max(64).optional().describe('tags for the path');
const meta = z.record(z.string(), z.string()).optional().describe('key/value metadata for the path');

export function registerTools(server: McpServer, store: Store): void {
  server.registerTool(
    'kura_add_text',
    {
      title: 'Add text',
      description: 'Store text in Kura, at a path (like a file name) if given; the same text is stored once. Answers its digest.',
      inputSchema: { text: z.string().max(16 << 20), path: z.string().min(1).max(4096).optional(), mediaType: z.string().max(255).optional(), tags, meta },
    },
    ({ text, path, mediaType, tags: t, meta: m }) =>
      tool(async () => {
        const r = await store.put(new TextEncoder().encode(text), { ...(path ? { path } : {}), mediaType: mediaType ?? 'text/plain', ...(t ? { tags: t } : {}), ...(m ? { meta: m } : {}) });
        return { digest: r.digest, path: path ?? null, size: r.size };
      }),
  );
  server.registerTool(
    'kura_add_file',
    {
      title: 'Add a file',
      description: 'Store a file from this machine (PDF, Word and HTML documents are searched by their text). `path` is where it goes in Kura (default: its name).',
      inputSchema: { file: z.string().min(1).max(4096).describe('the file on this machine'), path: z.string().min(1).max(4096).optional(), tags, meta },
    },
    ({ file, path, tags: t, meta: m }) =>
      tool(async () => {
        const at = path ?? file.split(/[\\/]/).pop()!;
        const r = await store.put(file, { path: at, ...(t ? { tags: t } : {}), ...(m ? { meta: m } : {}) });
        return { digest: r.digest, path: at, size: r.size };
      }),
  );
  server.registerTool(
    'kura_get',
    {
      title: 'Read a document',
      description: `A document's text by path, path@version or digest (up to ${RESULT_CHARS} characters from \`offset\`); a binary document is described, not returned.`,
      inputSchema: { ref: z.string().min(1).max(4096), offset: z.number().int().min(0).optional() },
    },
    ({ ref, offset }) =>
      tool(async () => {
        const info = await store.stat(ref);
        const from = Math.min(offset ?? 0, info.size);
        const bytes = await store.getRange(info.digest, from, Math.min(info.size, from + 4 * RESULT_CHARS));
        let text: string;
        try {
          text = fatal.decode(bytes);
        } catch {
          return { digest: info.digest, path: info.path, size: info.size, mediaType: info.mediaType, text: null, note: 'not UTF-8 text: search finds it by its extracted text, path, tags and metadata' };
        }
        const cut = text.length > RESULT_CHARS;
        return { digest: info.digest, path: info.path, size: info.size, mediaType: info.mediaType, offset: from, text: cut ? text.slice(0, RESULT_CHARS) : text, ...(cut || from + bytes.length < info.size ? { more: true } : {}) };
      }),
  );
  server.registerTool(
    'kura_list',
    {
      title: 'List paths',
      description: 'Paths in Kura (with digest, size, media type, tags), filtered by a path prefix or a tag; 100 at most, `cursor` for the next page.',
      inputSchema: { prefix: z.string().max(4096).optional(), tag: z.string().max(256).optional(), limit: z.number().int().min(1).max(100).optional(), cursor: z.string().max(64).optional() },
    },
    ({ prefix, tag, limit, cursor }) =>
      tool(async () => {
        const page = await store.list({ ...(prefix ? { pathPrefix: prefix } : {}), ...(tag ? { tag } : {}), limit: limit ?? 50, ...(cursor ? { cursor } : {}) });
        return { items: page.items.map((d) => ({ path: d.path, digest: d.digest, size: d.size, mediaType: d.mediaType, tags: d.tags })), nextCursor: page.nextCursor ?? null };
      }),
  );
  server.registerTool(
    'kura_search',
    {
      title: 'Search',
      description:
        'Find documents by a question or words: `hybrid` (default when the local model is installed) fuses `keyword` (BM25) and `semantic` (by meaning). Any text is a query; operators are honoured where well formed: "a phrase", prefix*, AND, OR, NOT, -word, path:P, tag:T, type:M. Hits are best first, with a snippet; `parsedAs` says how the query was read, `fallbacks` what was read as plain words. `notEmbedded`, when present: documents added so recently that the semantic side could not see them yet (keyword search sees everything).',
      inputSchema: { query: z.string().max(65_536), mode: z.enum(['keyword', 'semantic', 'hybrid']).optional(), limit: z.number().int().min(1).max(50).optional(), prefix: z.string().max(4096).optional(), tag: z.string().max(256).optional(), minScore: z.number().min(-1).max(1).optional(), allVersions: z.boolean().optional().describe('every version of each path (by words): hits carry `version`'), snapshot: z.string().max(64).optional().describe("the files of one snapshot (by words): hits name the file's path in it") },
    },
    ({ query, mode, limit, prefix, tag, minScore, allVersions, snapshot }) =>
      tool(async () => {
        const hits = await store.search(query, { limit: limit ?? 10, waitMs: SEARCH_WAIT_MS, ...(mode ? { mode } : {}), ...(prefix ? { pathPrefix: prefix } : {}), ...(tag ? { tag } : {}), ...(minScore !== undefined ? { minScore } : {}), ...(allVersions ? { allVersions } : {}), ...(snapshot ? { snapshot } : {}) });
        return {
          hits: hits.map((h) => ({ path: h.path, ...(h.version !== undefined ? { version: h.version } : {}), digest: h.digest, mediaType: h.mediaType, size: h.size, score: h.score, snippet: h.snippet, matched: h.matched, ...(h.keyword ? { keyword: h.keyword } : {}), ...(h.semantic ? { semantic: h.semantic } : {}), ...(h.rerank ? { rerank: h.rerank } : {}) })),
          parsedAs: hits.parsedAs,
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
        "Lines of the stored text (text files; PDF, DOCX and HTML by their extracted text) that match a regular expression (Rust regex syntax, linear time), with their path and line number: exact strings, names, identifiers — where search ranks by relevance, grep finds every occurrence. At most `limit` lines (default 100); `truncated` says when there were more.",
      inputSchema: {
        pattern: z.string().min(1).max(4096),
        prefix: z.string().max(4096).optional().describe('only paths starting with this'),
        tag: z.string().max(256).optional(),
        ignoreCase: z.boolean().optional(),
        context: z.number().int().min(0).max(10).optional().describe('lines of context around each match'),
        limit: z.number().int().min(1).max(500).optional(),
      },
      annotations: { readOnlyHint: true },
    },
    ({ pattern, prefix, tag, ignoreCase, context, limit }) =>
      tool(async () => {
        const lines: { path: string; line: number; text: string; match: boolean }[] = [];
        let summary: unknown;
        const errors: { path: string; code: string; message: string }[] = [];
        for await (const e of store.grep(pattern, { ignoreCase: ignoreCase ?? false, ...(prefix ? { prefixes: [prefix] } : {}), ...(tag ? { tag } : {}), context: context ?? 0, limit: limit ?? 100 })) {
          if (e.type === 'match' || e.type === 'context') lines.push({ path: e.path, line: e.line, text: e.text.length > 500 ? `${e.text.slice(0, 500)}…` : e.text, match: e.type === 'match' });
          else if (e.type === 'error') errors.push({ path: e.path, code: e.code, message: e.message });
          else if (e.type === 'summary') summary = e;
        }
        return { lines, ...(errors.length ? { errors } : {}), summary };
      }),
  );
  server.registerTool(
    'kura_versions',
    {
      title: 'Versions of a path',
      description: 'Every version of a path, oldest first: its number, digest, size and time; read one with kura_get and `path@N`.',
      inputSchema: { path: z.string().min(1).max(4096) },
    },
    ({ path }) => tool(async () => ({ versions: (await store.versions(path)).slice(-200) })),
  );
}
