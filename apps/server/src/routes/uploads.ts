/**
 * Resumable uploads, modelled on the OCI distribution spec: POST starts one (202 + Location),
 * PATCH appends (Content-Range must start at the current offset, else 416 with the offset),
 * GET/HEAD tell the offset, PUT ?digest= finishes into a document, DELETE cancels.
 */
import { SNIFF_HEAD } from '@kura/store';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { HttpError } from '../errors.js';
import { acceptRawBodies, bodyPieces, declaredLength, tooLarge } from '../http/body.js';
import { PutQuery, putMetaFrom, withDetectedType } from '../http/meta.js';
import { PutResult, errors, putAnswer } from '../schemas.js';
import { newUploadId, ownsUpload, parseContentRange, uploadNotFound, type UploadStaging } from '../uploads/staging.js';

const Progress = z.object({ id: z.string(), location: z.string(), offset: z.number().int(), expiresAt: z.string() });
const IdParams = z.object({ id: z.string() });

function progress(reply: FastifyReply, id: string, offset: number, expiresAt: Date) {
  const location = `/v1/uploads/${id}`;
  reply.header('location', location).header('x-kura-upload-offset', String(offset)).header('x-kura-upload-expires', expiresAt.toISOString());
  // OCI: Range names the bytes received, inclusive; absent while there are none.
  if (offset > 0) reply.header('range', `0-${offset - 1}`);
  return { id, location, offset, expiresAt: expiresAt.toISOString() };
}

export default async function uploads(app: FastifyInstance, opts: { staging: UploadStaging; maxDocumentSize: number }) {
  const { staging, maxDocumentSize } = opts;
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.post('/v1/uploads', {
    config: { scope: 'write' },
    // Nothing is named here — the path, type, tags and metadata are the finishing PUT's: a
    // `?path=` given here was dropped without a word, and the document landed with no path (a trial).
    schema: { summary: 'Start a resumable upload (it takes no parameters and no body: the finishing PUT names the document)', querystring: z.object({}).strict(), response: { 202: Progress, ...errors(400, 401, 403) } },
    handler: async (request, reply) => {
      const length = request.headers['content-length'];
      if ((length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined) {
        throw new HttpError('INVALID_INPUT', 'POST /v1/uploads takes no body: send the bytes with PATCH, and the path, type, tags and metadata with the finishing PUT', { field: 'body' });
      }
      const id = newUploadId(request.principal);
      await staging.create(id);
      const { expiresAt } = await staging.offset(id);
      return reply.code(202).send(progress(reply, id, 0, expiresAt));
    },
  });

  // An upload is its starter's: another token's request for it is NOT_FOUND (staging.ts).
  const owned = async (request: { params: unknown; principal: string | undefined }) => {
    if (!ownsUpload((request.params as { id: string }).id, request.principal)) throw uploadNotFound();
  };

  // HEAD comes with GET (fastify's automatic HEAD route): same headers, no body.
  r.get('/v1/uploads/:id', {
    config: { scope: 'write' },
    preHandler: owned,
    schema: { summary: 'How many bytes of the upload arrived (also HEAD)', params: IdParams, response: { 200: Progress, ...errors(401, 403, 404) } },
    handler: async (request, reply) => {
      const { offset, expiresAt } = await staging.offset(request.params.id);
      return progress(reply, request.params.id, offset, expiresAt);
    },
  });

  r.delete('/v1/uploads/:id', {
    config: { scope: 'write' },
    preHandler: owned,
    schema: { summary: 'Cancel an upload', params: IdParams, response: { 204: z.null(), ...errors(401, 403, 404, 409) } },
    handler: async (request, reply) => {
      await staging.exclusive(request.params.id, async () => staging.remove(request.params.id));
      return reply.code(204).send(null);
    },
  });

  await r.register(async (raw) => {
    acceptRawBodies(raw);
    const rr = raw.withTypeProvider<ZodTypeProvider>();

    rr.patch('/v1/uploads/:id', {
      config: { scope: 'write' },
      preHandler: owned,
      schema: {
        summary: 'Append bytes; Content-Range (optional) must start at the current offset',
        params: IdParams,
        response: { 202: Progress, ...errors(400, 401, 403, 404, 409, 413, 416) },
      },
      handler: async (request, reply) => {
        const id = request.params.id;
        const range = parseContentRange(request.headers['content-range']);
        const offset = await staging.exclusive(id, async (upload) => {
          const at = upload.offset;
          if (range && range.start !== at) {
            throw new HttpError('RANGE_NOT_SATISFIABLE', `this upload has ${at} bytes; append from there`, { offset: at }, {
              'x-kura-upload-offset': String(at),
              ...(at > 0 ? { range: `0-${at - 1}` } : {}),
            });
          }
          const declared = declaredLength(request);
          if (range && declared !== undefined && declared !== range.length) {
            throw new HttpError('INVALID_INPUT', 'Content-Length differs from the Content-Range', { field: 'content-range' });
          }
          return upload.append(bodyPieces(request, maxDocumentSize - at, () => uploadOver(maxDocumentSize, at)), range?.length);
        });
        const { expiresAt } = await staging.offset(id);
        return reply.code(202).send(progress(reply, id, offset, expiresAt));
      },
    });

    rr.put('/v1/uploads/:id', {
      config: { scope: 'write' },
      preHandler: owned,
      schema: {
        summary: 'Finish: append the body (if any), check the digest, store the document',
        description: 'digest (query) or x-kura-sha256 is required; metadata as for POST /v1/documents. On DIGEST_MISMATCH nothing is stored and the upload stays until it expires or is cancelled.',
        params: IdParams,
        querystring: PutQuery,
        response: { 201: PutResult, ...errors(400, 401, 403, 404, 409, 413, 416) },
      },
      handler: async (request, reply) => {
        const id = request.params.id;
        const meta = putMetaFrom(request, request.query);
        if (!meta.expectDigest) throw new HttpError('INVALID_INPUT', 'finishing an upload needs its digest (?digest= or x-kura-sha256)', { field: 'digest' });
        // A last piece with a Content-Range starts where the upload is, as PATCH's does (it was
        // appended wherever it said it began: a trial).
        const range = parseContentRange(request.headers['content-range']);
        const result = await staging.exclusive(id, async (upload) => {
          if (range && range.start !== upload.offset) {
            throw new HttpError('RANGE_NOT_SATISFIABLE', `this upload has ${upload.offset} bytes; append from there`, { offset: upload.offset }, {
              'x-kura-upload-offset': String(upload.offset),
              ...(upload.offset > 0 ? { range: `0-${upload.offset - 1}` } : {}),
            });
          }
          await upload.append(bodyPieces(request, maxDocumentSize - upload.offset, () => uploadOver(maxDocumentSize, upload.offset)), range?.length);
          let r;
          try {
            r = await request.store.put(upload.bytes(), meta.mediaType !== undefined ? meta : (await withDetectedType(meta, await upload.head(SNIFF_HEAD))).meta);
          } catch (e) {
            await upload.rollback(); // the upload is as it was: a retry with its body appends it once
            throw e;
          }
          await staging.remove(id); // still held: no PATCH can slip in between
          return r;
        });
        return reply.code(201).header('location', `/v1/documents/${result.digest}`).send(putAnswer(result, request.access?.scopes));
      },
    });
  });
}

/** An append that would take an upload past the document limit: said as the upload's total, not the append's room. */
function uploadOver(maxDocumentSize: number, received: number): HttpError {
  return tooLarge(maxDocumentSize, `the upload would be over this server's document limit of ${maxDocumentSize} bytes (${received} received so far)`);
}
