/**
 * `GET /v1/grep` (decision 0055): lines of the stored text that match a regular expression,
 * streamed as NDJSON events (begin, match, context, end, error, summary: docs/HTTP.md "grep").
 * The pattern is checked before the answer starts, so a bad one is a 400, not a broken
 * stream. Linear-time matching and event-loop turns between documents: a hostile pattern
 * cannot hold the server.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { CONTEXT_MAX, type GrepEvent } from '@kura/store';
import { errors } from '../schemas.js';

/** Matching lines in one answer at most (`limit`): then the summary says `truncated`. */
export const GREP_LIMIT_MAX = 100_000;

const flag = z.enum(['true', 'false']).default('false');

export default async function grep(app: FastifyInstance) {
  app.withTypeProvider<ZodTypeProvider>().get('/v1/grep', {
    config: { scope: 'read' },
    schema: {
      summary: 'Lines of the stored text that match a regular expression (NDJSON events)',
      description:
        "`pattern`: Rust's regex syntax (no look-around or backreferences), matched in linear time line by line against every path's latest text — text files as they are, PDF, DOCX and HTML by their extracted text. The answer is `application/x-ndjson`: `begin`, `match`/`context` lines (`line`, `text`, `submatch`; `matchedTexts` with `onlyMatching`), `end` (`matches`), `error` for a document that could not be read, then one `summary` (`files`, `filesMatched`, `matches`, `bytes`, `truncated`).",
      querystring: z
        .object({
          pattern: z.string().max(4096).describe('empty: every line (as grep "")'),
          prefix: z.union([z.string(), z.array(z.string())]).optional().describe('only paths starting with this (repeatable)'),
          tag: z.string().optional(),
          type: z.string().optional().describe('media type: text/markdown, text/*, or a subtype alone (pdf)'),
          ignoreCase: flag,
          word: flag.describe('whole words only: the pattern between word boundaries (grep -w)'),
          context: z.coerce.number().int().min(0).max(CONTEXT_MAX).default(0),
          filesWithMatches: flag.describe('each file at its first match only'),
          count: flag.describe('each file with a match as its begin and its end (`matches`: its matching lines), no match or context lines (grep -c)'),
          onlyMatching: flag.describe('each match event also carries `matchedTexts`: every match in its line (grep -o)'),
          limit: z.coerce.number().int().min(1).max(GREP_LIMIT_MAX).default(10_000),
        })
        .strict(),
      response: { ...errors(400, 401, 403) },
    },
    handler: async (request, reply) => {
      const q = request.query;
      const prefixes = q.prefix === undefined ? [] : Array.isArray(q.prefix) ? q.prefix : [q.prefix];
      const events = request.store.grep(q.pattern, {
        ignoreCase: q.ignoreCase === 'true',
        ...(q.word === 'true' ? { word: true } : {}),
        ...(prefixes.length ? { prefixes } : {}),
        ...(q.tag !== undefined ? { tag: q.tag } : {}),
        ...(q.type !== undefined ? { type: q.type } : {}),
        context: q.context,
        firstPerFile: q.filesWithMatches === 'true',
        ...(q.count === 'true' ? { count: true } : {}),
        ...(q.onlyMatching === 'true' ? { onlyMatching: true } : {}),
        limit: q.limit,
      });
      // The first event compiles the pattern: a bad one throws here, before any byte is sent.
      const first = await events.next();
      async function* lines(): AsyncGenerator<string> {
        if (!first.done) yield `${JSON.stringify(first.value satisfies GrepEvent)}\n`;
        for await (const e of { [Symbol.asyncIterator]: () => events }) yield `${JSON.stringify(e)}\n`;
      }
      // (The typed reply knows the error bodies only: the stream is sent through the plain one.)
      return (reply as FastifyReply).type('application/x-ndjson; charset=utf-8').send(Readable.from(lines()));
    },
  });
}
