/**
 * The log's conditional creates, sent without the SDK's middleware (decision 0046).
 *
 * A server's commits are one chain of `PUT If-None-Match: *` requests, and every put waits for
 * one or two of them, so a create's latency bounds small puts on object storage. Through
 * `S3Client.send` a 30 KB create costs this process ~1.2 ms of CPU (the middleware stack and
 * the garbage it leaves, on the main thread and V8's helpers) — more than the request itself
 * takes on a loopback server. This path signs the same request with the SDK's own SigV4 signer
 * (`@smithy/signature-v4`, the version the SDK uses, with the client's credentials, clock
 * offset and resolved endpoint) and sends it with `node:http` on the client's agents: one
 * request, no retries, no error parsing. It answers only what it is sure of — 200 created, 412
 * taken — and everything else (an error status, a reset, a timeout) is `undefined`, for the
 * caller to send again through the SDK, whose retries, 409 handling and error mapping then
 * apply unchanged. A request whose answer was lost may have been written: the SDK's attempt then
 * meets a 412, and the caller's byte comparison decides, as for any retried create. A server
 * that refuses one of these requests as such (400, 401, 403, 404, 501) gets only the SDK's from then
 * on: a difference between the two costs one request, not one per commit.
 */
import { request as httpRequest, type Agent as HttpAgent, type IncomingMessage } from 'node:http';
import { request as httpsRequest, type Agent as HttpsAgent } from 'node:https';
import type { S3Client } from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';

export type CreateAnswer = 'created' | 'taken';

interface Target {
  url: URL;
  signer: SignatureV4;
}

export class SignedCreates {
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #endpoint: string | undefined;
  readonly #region: string;
  readonly #pathStyle: boolean;
  readonly #agents: { http: HttpAgent; https: HttpsAgent };
  readonly #timeoutMs: number;
  readonly #onDate: (date: string) => void;
  #target: Target | undefined;
  /** The server refused one of these requests as such: every create goes through the SDK. */
  #off = false;

  constructor(
    client: S3Client,
    where: { bucket: string; endpoint: string | undefined; region: string; pathStyle: boolean },
    agents: { http: HttpAgent; https: HttpsAgent },
    timeoutMs: number,
    onDate: (date: string) => void,
  ) {
    this.#client = client;
    this.#bucket = where.bucket;
    this.#endpoint = where.endpoint;
    this.#region = where.region;
    this.#pathStyle = where.pathStyle;
    this.#agents = agents;
    this.#timeoutMs = timeoutMs;
    this.#onDate = onDate;
  }

  /** Creates `key` (the bucket's key, prefix included) if it is free: what the server said, or undefined when it said nothing sure. */
  async create(key: string, bytes: Uint8Array): Promise<CreateAnswer | undefined> {
    if (this.#off) return undefined;
    try {
      const { url, signer } = this.#resolve();
      const path = `${url.pathname.replace(/\/$/, '')}/${key}`;
      const signed = await signer.sign(
        {
          method: 'PUT',
          protocol: url.protocol,
          hostname: url.hostname,
          ...(url.port ? { port: Number(url.port) } : {}),
          path,
          query: {},
          headers: { host: url.host, 'content-length': String(bytes.length), 'if-none-match': '*' },
          body: bytes,
        },
        { signingDate: new Date(Date.now() + (this.#client.config.systemClockOffset ?? 0)) },
      );
      const status = await this.#send(url, path, signed.headers, bytes);
      // Refused as a request (a signature or an address the SDK would make otherwise, a server
      // that wants something this path does not send): the SDK's path from now on, so that a
      // difference costs one request, not one per commit.
      if (status === 400 || status === 401 || status === 403 || status === 404 || status === 501) this.#off = true;
      return status === 200 ? 'created' : status === 412 ? 'taken' : undefined;
    } catch {
      return undefined; // (the SDK's attempt reports what is wrong, in the contract's terms)
    }
  }

  /** The bucket's URL and the signer for it, resolved once by the SDK's own endpoint rules. */
  #resolve(): Target {
    if (this.#target) return this.#target;
    const resolved = this.#client.config.endpointProvider({
      Bucket: this.#bucket,
      Region: this.#region,
      ForcePathStyle: this.#pathStyle,
      UseFIPS: false,
      UseDualStack: false,
      Accelerate: false,
      ...(this.#endpoint ? { Endpoint: this.#endpoint } : {}),
    });
    const scheme = (resolved.properties?.authSchemes as { name?: string; signingRegion?: string; signingName?: string }[] | undefined)?.[0];
    if (scheme && scheme.name !== 'sigv4') {
      this.#off = true; // (S3 Express and the like sign otherwise: the SDK's path)
      throw new Error(`this bucket signs with ${scheme.name}`);
    }
    const signer = new SignatureV4({
      credentials: this.#client.config.credentials,
      region: scheme?.signingRegion ?? this.#region,
      service: scheme?.signingName ?? 's3',
      sha256: this.#client.config.sha256,
      uriEscapePath: false, // S3 signs the path as sent
      applyChecksum: true,
    });
    this.#target = { url: new URL(resolved.url.href), signer };
    return this.#target;
  }

  #send(url: URL, path: string, headers: Record<string, string>, body: Uint8Array): Promise<number> {
    return new Promise((resolve, reject) => {
      const https = url.protocol === 'https:';
      const req = (https ? httpsRequest : httpRequest)(
        { host: url.hostname, port: url.port || undefined, method: 'PUT', path, headers, agent: https ? this.#agents.https : this.#agents.http },
        (res: IncomingMessage) => {
          res.resume(); // (the body — empty, or an error document the SDK will fetch for itself — frees the socket)
          res.on('end', () => {
            const date = res.headers.date;
            if (date) this.#onDate(date);
            resolve(res.statusCode ?? 0);
          });
          res.on('error', reject);
        },
      );
      req.setTimeout(this.#timeoutMs, () => req.destroy(new Error('timed out')));
      req.on('error', reject);
      req.end(body);
    });
  }
}
