/**
 * An OpenAI-compatible embeddings endpoint on 127.0.0.1 for tests (`POST /v1/embeddings`),
 * answering with a real embedder's vectors (the local model), and its faulty twin: faults
 * queued in `faults` apply to the next requests, one each.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Embedder } from '../../src/semantic/embedder.js';

export type Fault =
  | { status: number; retryAfter?: number; error?: string }
  | 'wrong-count'
  | 'wrong-dims'
  | 'infinite'
  | 'not-json'
  | 'hang'
  | 'reset';

export interface EmbeddingServer {
  url: string;
  /** Every request's Authorization header and body, in order. */
  requests: { authorization: string | undefined; body: { model?: unknown; input?: unknown } }[];
  faults: Fault[];
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(body);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const p of req) parts.push(p as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

/** `model`: the name the endpoint answers to; `key`: the bearer token it wants (none: any). */
export async function startEmbeddingServer(embedder: Embedder, options: { model: string; key?: string }): Promise<EmbeddingServer> {
  const requests: EmbeddingServer['requests'] = [];
  const faults: Fault[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const raw = await readBody(req);
      let body: { model?: unknown; input?: unknown } = {};
      try {
        body = JSON.parse(raw) as typeof body;
      } catch {
        // recorded as empty
      }
      requests.push({ authorization: req.headers.authorization, body });
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') return send(res, 404, JSON.stringify({ error: { message: `no route ${req.url}` } }));
      if (options.key && req.headers.authorization !== `Bearer ${options.key}`) return send(res, 401, JSON.stringify({ error: { message: 'Incorrect API key provided.' } }));
      if (body.model !== options.model) return send(res, 404, JSON.stringify({ error: { message: `The model \`${String(body.model)}\` does not exist` } }));
      const fault = faults.shift();
      if (fault === 'hang') return; // never answers
      if (fault === 'reset') return req.socket.destroy();
      if (fault === 'not-json') return send(res, 200, '<html>gateway</html>');
      if (typeof fault === 'object') return send(res, fault.status, JSON.stringify({ error: { message: fault.error ?? 'overloaded' } }), fault.retryAfter !== undefined ? { 'retry-after': String(fault.retryAfter) } : {});
      const input = body.input as string[];
      const vectors = await embedder.embed(input);
      let data = vectors.map((v, index) => ({ object: 'embedding', index, embedding: Array.from(v) }));
      if (fault === 'wrong-count') data = data.slice(1);
      if (fault === 'wrong-dims') data[0]!.embedding = data[0]!.embedding.slice(1);
      let json = JSON.stringify({ object: 'list', model: options.model, data: data.reverse() }); // out of order: `index` says where each goes
      if (fault === 'infinite') json = json.replace(/"embedding":\[[^,\]]+/, '"embedding":[1e999');
      send(res, 200, json);
    })().catch((e: unknown) => send(res, 500, JSON.stringify({ error: { message: String(e) } })));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    faults,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
