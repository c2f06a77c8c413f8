/**
 * Objects in an S3-compatible bucket through @aws-sdk/client-s3 (the ObjectStore contract,
 * objects/object-store.ts; decision 0039). Configured the way AWS tools are: AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_ENDPOINT_URL_S3 (or AWS_ENDPOINT_URL); a custom
 * endpoint (a self-hosted server) is addressed path-style. Keys live under the location's
 * prefix: `s3://bucket/team/cache` keeps key `log/…` at `team/cache/log/…`.
 *
 * The traps SCALEOUT.md lists are handled here: the SDK retries a conditional PUT whose answer
 * was lost and then meets a 412 for its own write (`create` reads the object and compares), and
 * multipart uploads carry the condition on CompleteMultipartUpload (never a client that sends it
 * elsewhere).
 */
import { createHash } from 'node:crypto';
import { Agent } from 'node:https';
import { Agent as HttpAgent } from 'node:http';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { InvalidInputError, NotFoundError, StorageUnavailableError, StorageUnreachableError } from '../errors.js';
import {
  checkKey,
  checkLimit,
  checkPart,
  checkPrefix,
  checkRange,
  isNotFound,
  sameBytes,
  type ByteRange,
  type ListOptions,
  type ListPage,
  type ObjectInfo,
  type ObjectStore,
  type UploadedPart,
} from '../objects/object-store.js';
import { parseS3Location } from './s3-location.js';
import { SignedCreates } from './s3-signed-create.js';

export interface S3Options {
  /** The server's URL (`http://127.0.0.1:7070`); AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, else AWS's own. */
  endpoint?: string;
  /** AWS_REGION (AWS_DEFAULT_REGION), else us-east-1 (what self-hosted servers expect). */
  region?: string;
  /** Given explicitly (tests, several stores in one process); else the SDK's default chain (the environment, profiles). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** Path-style addressing (`endpoint/bucket/key`): the default with a custom endpoint. */
  pathStyle?: boolean;
  /** Attempts per request, the first included (the SDK backs off between them). Default 5. */
  maxAttempts?: number;
  /** Milliseconds a request may take before it is abandoned (and retried). Default 60,000. */
  requestTimeoutMs?: number;
}

export class S3ObjectStore implements ObjectStore {
  readonly location: string;
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #prefix: string;
  /** Strings never to show in a message: the credentials, when given. */
  readonly #secrets: string[];
  #clockOffset: number | undefined;
  /** The log's creates without the SDK's middleware; the SDK's path when it is unsure. */
  readonly #signed: SignedCreates;

  constructor(location: string, options: S3Options = {}) {
    const { bucket, prefix } = parseS3Location(location);
    this.#bucket = bucket;
    this.#prefix = prefix;
    this.location = `s3://${bucket}${prefix ? `/${prefix.slice(0, -1)}` : ''}`;
    const env = process.env;
    // The SDK warns on Node 20 that its releases from 2027 will need Node 22: this store pins
    // its release (package.json), so the warning would only be noise on every user's terminal.
    env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
    const endpoint = options.endpoint ?? env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL;
    const agents = { http: new HttpAgent({ keepAlive: true, maxSockets: 64 }), https: new Agent({ keepAlive: true, maxSockets: 64 }) };
    const region = options.region ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'us-east-1';
    const pathStyle = options.pathStyle ?? endpoint !== undefined;
    const requestTimeout = options.requestTimeoutMs ?? 60_000;
    this.#client = new S3Client({
      region,
      ...(endpoint ? { endpoint } : {}),
      forcePathStyle: pathStyle,
      ...(options.credentials ? { credentials: options.credentials } : {}),
      maxAttempts: options.maxAttempts ?? 5,
      // Third-party servers do not all know the newer flexible checksums (SCALEOUT.md).
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: { requestTimeout, connectionTimeout: 10_000, httpAgent: agents.http, httpsAgent: agents.https },
    });
    // Each answer's Date: how far the server's clock is from ours (GC's clock-skew guard,
    // decision 0041). Whole seconds, which a guard of a minute can afford.
    this.#client.middlewareStack.add(
      (next) => async (args) => {
        const out = await next(args);
        const date = (out.response as { headers?: Record<string, string> } | undefined)?.headers?.date;
        if (date) this.#noteDate(date);
        return out;
      },
      { step: 'deserialize', name: 'kuraServerClock' },
    );
    this.#signed = new SignedCreates(this.#client, { bucket, endpoint, region, pathStyle }, agents, requestTimeout, (date) => this.#noteDate(date));
    this.#secrets = options.credentials ? [options.credentials.accessKeyId, options.credentials.secretAccessKey].filter((s) => s.length >= 4) : [];
    for (const name of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN']) {
      const v = env[name];
      if (v && v.length >= 4) this.#secrets.push(v);
    }
  }

  clockOffsetMs(): number | undefined {
    return this.#clockOffset;
  }

  #noteDate(date: string): void {
    const at = Date.parse(date);
    if (Number.isFinite(at)) this.#clockOffset = at - Date.now();
  }

  async get(key: string, range?: ByteRange): Promise<Uint8Array> {
    checkKey(key);
    checkRange(range);
    try {
      const res = await this.#client.send(
        new GetObjectCommand({
          Bucket: this.#bucket,
          Key: this.#prefix + key,
          ...(range ? { Range: `bytes=${range.offset}-${range.offset + range.length - 1}` } : {}),
        }),
      );
      return await res.Body!.transformToByteArray();
    } catch (e) {
      if (range && status(e) === 416) return new Uint8Array(0); // the object ends before the range starts
      throw this.#error(e, 'get', key);
    }
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    checkKey(key);
    try {
      const res = await this.#client.send(new HeadObjectCommand({ Bucket: this.#bucket, Key: this.#prefix + key }));
      return { key, size: res.ContentLength ?? 0, etag: res.ETag ?? '', modified: res.LastModified?.getTime() ?? 0 };
    } catch (e) {
      if (status(e) === 404) return undefined;
      throw this.#error(e, 'head', key);
    }
  }

  async put(key: string, bytes: Uint8Array): Promise<string> {
    checkKey(key);
    try {
      const res = await this.#client.send(new PutObjectCommand({ Bucket: this.#bucket, Key: this.#prefix + key, Body: bytes, ContentLength: bytes.length }));
      return res.ETag ?? '';
    } catch (e) {
      throw this.#error(e, 'put', key);
    }
  }

  async create(key: string, bytes: Uint8Array): Promise<boolean> {
    checkKey(key);
    const answer = await this.#signed.create(this.#prefix + key, bytes);
    if (answer === 'created') return true;
    if (answer === 'taken') return this.#holds(key, bytes); // (as a 412 below: the bytes decide)
    for (let attempt = 1; ; attempt++) {
      try {
        await this.#client.send(new PutObjectCommand({ Bucket: this.#bucket, Key: this.#prefix + key, Body: bytes, ContentLength: bytes.length, IfNoneMatch: '*' }));
        return true;
      } catch (e) {
        // 412: the key is taken — perhaps by this very write, whose answer was lost and which
        // the SDK sent again: the bytes decide. 409 (ConditionalRequestConflict): another
        // conditional write to the key is in flight; once it settles, the same question.
        if (status(e) === 412) return this.#holds(key, bytes);
        if (status(e) === 409 && attempt < 8) {
          await pause(20 * attempt);
          continue;
        }
        throw this.#error(e, 'create', key);
      }
    }
  }

  async replace(key: string, bytes: Uint8Array, etag: string): Promise<string | undefined> {
    checkKey(key);
    try {
      const res = await this.#client.send(new PutObjectCommand({ Bucket: this.#bucket, Key: this.#prefix + key, Body: bytes, ContentLength: bytes.length, IfMatch: etag }));
      return res.ETag ?? '';
    } catch (e) {
      // 412: changed since; 404: gone; 409: another conditional write won the race.
      if (status(e) === 412 || status(e) === 404 || status(e) === 409) return undefined;
      throw this.#error(e, 'replace', key);
    }
  }

  async delete(key: string): Promise<void> {
    checkKey(key);
    try {
      await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: this.#prefix + key }));
    } catch (e) {
      if (status(e) === 404) return;
      throw this.#error(e, 'delete', key);
    }
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    checkPrefix(prefix);
    const limit = checkLimit(options.limit);
    try {
      const res = await this.#client.send(
        new ListObjectsV2Command({
          Bucket: this.#bucket,
          Prefix: this.#prefix + prefix,
          MaxKeys: limit,
          ...(options.startAfter !== undefined ? { StartAfter: this.#prefix + options.startAfter } : {}),
        }),
      );
      const objects = (res.Contents ?? []).map((o) => ({
        key: o.Key!.slice(this.#prefix.length),
        size: o.Size ?? 0,
        etag: o.ETag ?? '',
        modified: o.LastModified?.getTime() ?? 0,
      }));
      return { objects, more: res.IsTruncated === true };
    } catch (e) {
      throw this.#error(e, 'list', prefix);
    }
  }

  async startUpload(key: string): Promise<string> {
    checkKey(key);
    try {
      const res = await this.#client.send(new CreateMultipartUploadCommand({ Bucket: this.#bucket, Key: this.#prefix + key }));
      return res.UploadId!;
    } catch (e) {
      throw this.#error(e, 'startUpload', key);
    }
  }

  async uploadPart(key: string, uploadId: string, partNumber: number, bytes: Uint8Array): Promise<string> {
    checkKey(key);
    checkPart(partNumber);
    try {
      const res = await this.#client.send(
        new UploadPartCommand({ Bucket: this.#bucket, Key: this.#prefix + key, UploadId: uploadId, PartNumber: partNumber, Body: bytes, ContentLength: bytes.length }),
      );
      return res.ETag!;
    } catch (e) {
      throw this.#error(e, 'uploadPart', key);
    }
  }

  async completeUpload(key: string, uploadId: string, parts: readonly UploadedPart[], options: { ifAbsent?: boolean } = {}): Promise<string | undefined> {
    checkKey(key);
    parts.forEach((p) => checkPart(p.partNumber));
    try {
      const res = await this.#client.send(
        new CompleteMultipartUploadCommand({
          Bucket: this.#bucket,
          Key: this.#prefix + key,
          UploadId: uploadId,
          MultipartUpload: { Parts: parts.map((p) => ({ PartNumber: p.partNumber, ETag: p.etag })) },
          ...(options.ifAbsent ? { IfNoneMatch: '*' } : {}),
        }),
      );
      return res.ETag ?? '';
    } catch (e) {
      // Taken (412), or completed already by an attempt whose answer was lost (the retry then
      // finds no upload): ours when the object is the one these parts make — S3's multipart
      // etag is the MD5 of the parts' MD5s and their count.
      if ((status(e) === 412 && options.ifAbsent) || errorName(e) === 'NoSuchUpload') {
        const held = await this.head(key);
        if (held && sameEtag(held.etag, multipartEtag(parts))) return held.etag;
        if (status(e) === 412) {
          await this.abortUpload(key, uploadId);
          return undefined;
        }
      }
      if (status(e) === 400 && errorName(e) === 'EntityTooSmall') throw new InvalidInputError(`every part but the last is at least 5 MiB (${errorName(e)})`, 'parts');
      throw this.#error(e, 'completeUpload', key);
    }
  }

  async abortUpload(key: string, uploadId: string): Promise<void> {
    checkKey(key);
    try {
      await this.#client.send(new AbortMultipartUploadCommand({ Bucket: this.#bucket, Key: this.#prefix + key, UploadId: uploadId }));
    } catch (e) {
      if (status(e) === 404) return; // gone already
      throw this.#error(e, 'abortUpload', key);
    }
  }

  async close(): Promise<void> {
    this.#client.destroy();
  }

  /** Whether the object under `key` is exactly `bytes`. */
  async #holds(key: string, bytes: Uint8Array): Promise<boolean> {
    try {
      return sameBytes(await this.get(key), bytes);
    } catch (e) {
      if (isNotFound(e)) return false; // deleted since: it held other bytes or none
      throw e;
    }
  }

  /** The SDK's error as the contract's, with no credentials in its message. */
  #error(e: unknown, op: string, key: string): Error {
    const code = status(e);
    const name = errorName(e);
    // The SDK's first line (a parse error goes on to say where to look inside its object: a
    // message of one line, as every error's is).
    const said = ((e as Error)?.message ?? String(e)).split('\n')[0]!.trim();
    let text = `${op} ${this.location}/${key}: ${name ?? ''}${code ? ` (HTTP ${code})` : ''}: ${said}`;
    for (const s of this.#secrets) text = text.split(s).join('[redacted]');
    // No credentials found on this machine: nothing was sent (it was "did not answer": a trial).
    if (name === 'CredentialsProviderError') return new StorageUnavailableError(`no credentials for the object store on this machine (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a profile in ~/.aws): ${text}`);
    // An answer that is no S3 answer: the endpoint is something else (a web server, a Kura).
    if (/XML parse error|Deserialization error|unexpected content/i.test(said)) return new StorageUnavailableError(`the endpoint answered, but not as an S3 object store (is --endpoint or AWS_ENDPOINT_URL_S3 an S3 server?): ${text}`);
    // A missing object or upload; any other 404 is the store refusing us (NoSuchBucket, and
    // versitygw's XAdminUserNotFound for an unknown access key).
    if (name === 'NoSuchKey' || name === 'NotFound' || name === 'NoSuchUpload' || (code === 404 && name === undefined)) return new NotFoundError(`no object ${key}`);
    if (name === 'NoSuchBucket') return new StorageUnavailableError(`the bucket of ${this.location} does not exist: ${text}`);
    if (code === 404 || name === 'XAdminUserNotFound') return new StorageUnavailableError(`the object store refused this store's credentials or bucket: ${text}`);
    if (code === 403 || code === 401 || name === 'InvalidAccessKeyId' || name === 'SignatureDoesNotMatch' || name === 'AccessDenied') {
      return new StorageUnavailableError(`the object store refused this store's credentials: ${text}`);
    }
    if (code !== undefined && code >= 400 && code < 500) return new StorageUnavailableError(`the object store refused the request: ${text}`);
    return new StorageUnreachableError(`the object store did not answer: ${text}`, { cause: redacted(e, this.#secrets) });
  }
}

function status(e: unknown): number | undefined {
  return (e as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
}

function errorName(e: unknown): string | undefined {
  const name = (e as { name?: unknown; Code?: unknown })?.Code ?? (e as { name?: unknown })?.name;
  return typeof name === 'string' ? name : undefined;
}

/** The cause kept on an error: the SDK's own, unless its text shows a credential. */
function redacted(e: unknown, secrets: readonly string[]): unknown {
  const text = `${(e as Error)?.message ?? ''} ${(e as Error)?.stack ?? ''}`;
  return secrets.some((s) => text.includes(s)) ? undefined : e;
}

/** S3's etag of a multipart object: MD5 of the parts' MD5s, then "-" and the count. */
export function multipartEtag(parts: readonly UploadedPart[]): string {
  const h = createHash('md5');
  for (const p of parts) h.update(Buffer.from(p.etag.replace(/"/g, ''), 'hex'));
  return `"${h.digest('hex')}-${parts.length}"`;
}

function sameEtag(a: string, b: string): boolean {
  return a.replace(/"/g, '').toLowerCase() === b.replace(/"/g, '').toLowerCase();
}

function pause(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
