/**
 * Snapshots over HTTP (FORMAT.md §13): a tree of files already in the store (put them first),
 * recorded in one commit; listed; deleted. The tree arrives as JSON and is checked here without
 * recursion (a body nested 20,000 deep must be a 400, not a stack overflow), and copied field by
 * field: what reaches the log is exactly the tree, nothing else the client sent.
 */
import { detectMediaType, type DirNode, type FileEntry, type SymlinkEntry } from '@kura/store';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { sendDocument } from '../http/send.js';
import { HttpError } from '../errors.js';
import { errors, pathParam } from '../schemas.js';

const SnapshotInfo = z.object({
  id: z.string().describe('32 hex digits; any unique prefix of 4 or more names it'),
  label: z.string().nullable(),
  createdAt: z.string(),
  files: z.number().int(),
  bytes: z.number().int(),
  tree: z.string().describe('the root tree’s digest'),
  tags: z.array(z.string()),
  pinned: z.boolean().describe('kept whatever a retention policy says'),
});

const IdParams = z.object({ id: z.string() });

/** How deep a tree may nest, and how many entries it may hold. */
const MAX_DEPTH = 256;
const MAX_ENTRIES = 1_000_000;

/** A snapshot's JSON body at most: a tree of 1,000,000 entries of ~120 bytes. */
export const SNAPSHOT_BODY_LIMIT = 128 << 20;

export default async function snapshots(app: FastifyInstance) {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.post('/v1/snapshots', {
    config: { scope: 'write' },
    // A tree of up to 1,000,000 entries (the store's bound), ~120 bytes each: under the 1 MiB of
    // other JSON bodies a tree stopped at ~7,000 files, with no word of which limit (a trial).
    bodyLimit: SNAPSHOT_BODY_LIMIT,
    schema: {
      summary: 'Record a snapshot of a tree whose files are in the store',
      description:
        'root: {type:"dir", name, mode, mtime?, entries:[{type:"file", name, mode, size, digest, mtime?} | {type:"symlink", name, target} | a dir]}. A file whose digest the store lacks: 404.',
      body: z.object({
        label: z.string().max(1024).optional(),
        time: z.union([z.string(), z.number().int()]).optional().describe('when the snapshot is of (ISO 8601 or ms): imports; default now'),
        tags: z.array(z.string()).max(64).optional(),
        root: z.record(z.string(), z.unknown()),
      }).strict(), // (a typo, `lable`, dropped the label, and a `keep-tag` rule's tag with it: a trial)
      response: { 201: SnapshotInfo, ...errors(400, 401, 403, 404) },
    },
    handler: async (request, reply) => {
      const root = treeOf(request.body.root);
      const { label, time, tags } = request.body;
      const info = await request.store.createSnapshot(root, { ...(label !== undefined ? { label } : {}), ...(time !== undefined ? { time } : {}), ...(tags ? { tags } : {}) });
      return reply.code(201).send(info);
    },
  });

  r.get('/v1/snapshots', {
    config: { scope: 'read' },
    schema: { summary: 'Every snapshot, oldest first', response: { 200: z.object({ snapshots: z.array(SnapshotInfo) }), ...errors(401, 403) } },
    handler: async (request) => ({ snapshots: await request.store.snapshots() }),
  });

  // A snapshot's file, as a search with `snapshot` names it (its hits' digests may be kept by
  // snapshots alone, which GET /v1/documents does not serve).
  for (const method of ['GET', 'HEAD'] as const) {
    r.route({
      method,
      url: '/v1/snapshots/:id/files/*',
      exposeHeadRoute: false,
      config: { scope: 'read' },
      schema: {
        summary: "Read a file of a snapshot (the file's path in it), served like GET /v1/documents/{digest}",
        params: z.object({ id: z.string().min(1).max(64), '*': z.string() }),
        ...(method === 'GET' ? { response: errors(400, 401, 403, 404, 416) } : { hide: true }),
      },
      handler: async (request, reply) => {
        const path = pathParam(request.params['*']);
        const file = await request.store.snapshotFile(request.params.id, path);
        // Typed by its name: a snapshot's file has no entry (one with the same bytes is another's).
        const type = detectMediaType(path) ?? 'application/octet-stream';
        return sendDocument(request, reply, request.store, app.bytesCache, file.digest, { 'content-type': type, 'content-location': `/v1/documents/${file.digest}` }, true);
      },
    });
  }

  r.delete('/v1/snapshots/:id', {
    config: { scope: 'delete' },
    schema: { summary: 'Delete a snapshot (its documents’ chunks go at the next GC)', params: IdParams, response: { 204: z.null(), ...errors(401, 403, 404, 409) } },
    handler: async (request, reply) => {
      await request.store.deleteSnapshot(request.params.id);
      return reply.code(204).send(null);
    },
  });
}

type Raw = Record<string, unknown>;

/** The tree `root` describes, checked and copied without recursion; INVALID_INPUT (field `root`) naming what is wrong. */
const DIR_KEYS = ['type', 'name', 'mode', 'mtime', 'entries'] as const;
const FILE_KEYS = ['type', 'name', 'mode', 'size', 'digest', 'mtime'] as const;
const SYMLINK_KEYS = ['type', 'name', 'target'] as const;

export function treeOf(root: unknown): DirNode {
  const bad = (where: string, what: string) => new HttpError('INVALID_INPUT', `root${where}: ${what}`, { field: 'root' });
  const int = (v: unknown, max: number) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 && v <= max;
  const name = (o: Raw, where: string) => {
    if (typeof o.name !== 'string' || o.name.length > 1024) throw bad(where, 'name must be a string of at most 1024 characters');
    return o.name;
  };
  const mtime = (o: Raw, where: string): { mtime?: number } => {
    if (o.mtime === undefined) return {};
    if (!int(o.mtime, Number.MAX_SAFE_INTEGER)) throw bad(where, 'mtime must be milliseconds since the epoch');
    return { mtime: o.mtime as number };
  };
  const mode = (o: Raw, where: string) => {
    if (!int(o.mode, 0o7777)) throw bad(where, 'mode must be permission bits (0 to 0o7777)');
    return o.mode as number;
  };
  // Only the keys the format has (FORMAT.md §13): one more (`owner`, a symlink's `mode`) was
  // dropped without a word (a trial).
  const only = (o: Raw, where: string, keys: readonly string[]) => {
    for (const k of Object.keys(o)) if (!keys.includes(k)) throw bad(where, `a ${String(o.type)} entry has no ${JSON.stringify(k)} (it has ${keys.join(', ')})`);
  };
  const dir = (o: Raw, where: string): DirNode => {
    only(o, where, DIR_KEYS);
    if (!Array.isArray(o.entries)) throw bad(where, 'a directory has an entries array');
    return { type: 'dir', name: name(o, where), mode: mode(o, where), ...mtime(o, where), entries: [] };
  };
  if (typeof root !== 'object' || root === null || (root as Raw).type !== 'dir') throw bad('', 'the root is a directory ({type: "dir", …})');
  const top = dir(root as Raw, '');
  const work: { raw: Raw; node: DirNode; where: string; depth: number }[] = [{ raw: root as Raw, node: top, where: '', depth: 0 }];
  let count = 0;
  while (work.length) {
    const { raw, node, where, depth } = work.pop()!;
    for (const [i, e] of (raw.entries as unknown[]).entries()) {
      const at = `${where}.entries[${i}]`;
      if (++count > MAX_ENTRIES) throw bad('', `more than ${MAX_ENTRIES} entries`);
      if (typeof e !== 'object' || e === null) throw bad(at, 'an entry is an object');
      const o = e as Raw;
      if (o.type === 'file') {
        only(o, at, FILE_KEYS);
        if (!int(o.size, Number.MAX_SAFE_INTEGER)) throw bad(at, 'size must be a byte count');
        if (typeof o.digest !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(o.digest)) throw bad(at, 'digest must be sha256:<64 hex digits>');
        const f: FileEntry = { type: 'file', name: name(o, at), mode: mode(o, at), size: o.size as number, digest: o.digest as FileEntry['digest'], ...mtime(o, at) };
        node.entries.push(f);
      } else if (o.type === 'symlink') {
        only(o, at, SYMLINK_KEYS);
        if (typeof o.target !== 'string' || o.target.length === 0 || o.target.length > 4096) throw bad(at, 'target must be a string of 1 to 4096 characters');
        const l: SymlinkEntry = { type: 'symlink', name: name(o, at), target: o.target };
        node.entries.push(l);
      } else if (o.type === 'dir') {
        if (depth + 1 > MAX_DEPTH) throw bad(at, `directories nest at most ${MAX_DEPTH} deep`);
        const d = dir(o, at);
        node.entries.push(d);
        work.push({ raw: o, node: d, where: at, depth: depth + 1 });
      } else {
        throw bad(at, 'type must be "file", "symlink" or "dir"');
      }
    }
  }
  return top;
}
