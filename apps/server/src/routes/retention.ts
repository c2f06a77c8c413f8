/**
 * Retention over HTTP (decision 0058; docs/HTTP.md "Retention"): `POST /v1/forget` applies a
 * policy to snapshots (restic's rules) or to versions of paths and answers what it keeps, with
 * why, and what it removes (nothing with `dryRun`); pins keep a snapshot or a version whatever
 * a policy says. Removing is the `delete` scope (forget, unpin); policies, which remove on a
 * schedule for the whole store, are `admin`'s (decision 0060).
 */
import { SnapshotRules, VersionRules, snapshotRules, versionRules, type StoredPolicy } from '@kura/store';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { HttpError } from '../errors.js';
import { SafePath, errors } from '../schemas.js';

// The rules are the store's (retention/stored.ts): the same words here, in kept policies and in the CLI.
const SnapshotForget = SnapshotRules.extend({ label: z.string().optional().describe('only snapshots with this label are considered') }).strict();
const VersionForget = VersionRules.extend({ prefix: z.string().optional() }).strict();

const Kept = z.object({ time: z.string(), reasons: z.array(z.string()) });
const Forgotten = z.object({
  keep: z.array(Kept.extend({ id: z.string().optional(), path: z.string().optional(), version: z.number().int().optional() })),
  remove: z.array(z.object({ time: z.string(), id: z.string().optional(), path: z.string().optional(), version: z.number().int().optional() })),
});

export default async function retention(app: FastifyInstance) {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.post('/v1/forget', {
    config: { scope: 'delete' },
    schema: {
      summary: 'Remove the snapshots, or versions of paths, a retention policy does not keep',
      description:
        '`snapshots`: restic’s rules — `last`, `hourly`…`yearly` count periods that have a snapshot (not windows of time), `within` counts back from the newest snapshot, `tags` lists of tags; or `versions`: `keep` each path’s newest N, `within` those made within a duration of its newest, under `prefix`. Each path’s newest version and pinned items always stay. `dryRun`: change nothing. Answers `{keep: [{id | path, version, time, reasons}], remove: [{id | path, version, time}]}`; to a token without `read`, `204` and no body (the lists name paths, versions and snapshots).',
      body: z.object({ snapshots: SnapshotForget.optional(), versions: VersionForget.optional(), dryRun: z.boolean().default(false) }).strict(),
      response: { 200: Forgotten, 204: z.null(), ...errors(400, 401, 403) },
    },
    handler: async (request, reply) => {
      const { snapshots, versions, dryRun } = request.body;
      if ((snapshots === undefined) === (versions === undefined)) throw new HttpError('INVALID_INPUT', 'give `snapshots` or `versions` rules (one kind per request)', { field: 'body' });
      const answer = snapshots
        ? await request.store.forgetSnapshots({ ...snapshotRules(snapshots), ...(snapshots.label !== undefined ? { label: snapshots.label } : {}), dryRun })
        : await request.store.forgetVersions({ ...versionRules(versions!), ...(versions!.prefix !== undefined ? { prefix: versions!.prefix } : {}), dryRun });
      // What is kept and removed is an answer to read: a delete-only token gets 204 (it listed
      // every path, version and snapshot of the store: a trial).
      if (request.access && !request.access.scopes.has('read')) return reply.code(204).send(null);
      return answer;
    },
  });

  r.get('/v1/policies', {
    config: { scope: 'read' },
    schema: { summary: 'The retention policies kept in the store', response: { 200: z.object({ policies: z.array(z.record(z.string(), z.unknown())) }), ...errors(401, 403) } },
    handler: async (request) => ({ policies: await request.store.policies() }),
  });

  r.put('/v1/policies', {
    config: { scope: 'admin' },
    schema: {
      summary: 'Keep a retention policy (replacing the one for the same prefix or label)',
      description:
        '`{"kind":"versions","prefix","keep"?,"within"?}` or `{"kind":"snapshots","label"?,"last"?…"yearly"?,"within"?,"tags"?}`: the rules of POST /v1/forget. POST /v1/gc and the server’s schedule apply them.',
      body: z.record(z.string(), z.unknown()),
      response: { 200: z.record(z.string(), z.unknown()), ...errors(400, 401, 403) },
    },
    handler: async (request) => request.store.setPolicy(request.body as StoredPolicy),
  });

  r.delete('/v1/policies', {
    config: { scope: 'admin' },
    schema: {
      summary: 'Remove the policy for a prefix (versions) or a label (snapshots)',
      querystring: z.union([z.object({ kind: z.literal('versions'), prefix: z.string() }).strict(), z.object({ kind: z.literal('snapshots'), label: z.string().optional() }).strict()]),
      response: { 204: z.null(), ...errors(400, 401, 403, 404) },
    },
    handler: async (request, reply) => {
      const q = request.query;
      const found = await request.store.removePolicy(q.kind === 'versions' ? { kind: 'versions', prefix: q.prefix } : { kind: 'snapshots', ...(q.label !== undefined ? { label: q.label } : {}) });
      if (!found) throw new HttpError('NOT_FOUND', 'no such policy');
      return reply.code(204).send(null);
    },
  });

  r.post('/v1/policies::apply', {
    config: { scope: 'admin' },
    schema: {
      summary: 'Apply every retention policy now: what each keeps and removes (nothing with dryRun)',
      body: z.object({ dryRun: z.boolean().default(false) }).strict(),
      response: { 200: z.object({ applied: z.array(z.object({ policy: z.record(z.string(), z.unknown()), report: Forgotten })) }), ...errors(400, 401, 403) },
    },
    handler: async (request) => ({ applied: await request.store.applyPolicies({ dryRun: request.body.dryRun }) }),
  });

  for (const [method, pinned] of [['put', true], ['delete', false]] as const) {
    // Pinning keeps (write); unpinning lets a policy remove (delete).
    r[method]('/v1/snapshots/:id/pin', {
      config: { scope: pinned ? 'write' : 'delete' },
      schema: { summary: pinned ? 'Pin a snapshot: kept whatever a policy says' : 'Unpin a snapshot', params: z.object({ id: z.string() }), response: { 204: z.null(), ...errors(400, 401, 403, 404, 409) } },
      handler: async (request, reply) => {
        await request.store.pin({ snapshot: request.params.id }, pinned);
        return reply.code(204).send(null);
      },
    });
    r[method]('/v1/versions/pin', {
      config: { scope: pinned ? 'write' : 'delete' },
      schema: {
        summary: pinned ? 'Pin a version of a path: kept whatever a policy says' : 'Unpin a version of a path',
        querystring: z.object({ path: SafePath, version: z.coerce.number().int().min(1) }).strict(),
        response: { 204: z.null(), ...errors(400, 401, 403, 404) },
      },
      handler: async (request, reply) => {
        await request.store.pin({ path: request.query.path, version: request.query.version }, pinned);
        return reply.code(204).send(null);
      },
    });
  }
}
