/**
 * An HTTP proxy in front of an S3 server that breaks requests on purpose and counts them
 * (`tc netem` is not available here: SCALEOUT.md). Headers pass unchanged — Host included, so
 * the client's SigV4 signature still holds upstream. A rule matches requests (or, for random
 * workloads, a chance function decides per request) and:
 * - `reset`: closes the client's connection before forwarding (nothing happened);
 * - `drop-response`: forwards the request, lets the server finish it, then closes the client's
 *   connection without an answer (it happened; the answer was lost);
 * - `{ status, code }`: answers with an S3 error (503 SlowDown, 500 InternalError) unforwarded.
 */
import { Agent, createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProxyRequest {
  method: string;
  /** Path and query, as sent (`/bucket/key?uploads`). */
  url: string;
  headers: IncomingMessage['headers'];
}

export interface ProxyRule {
  match: (r: ProxyRequest) => boolean;
  action: 'reset' | 'drop-response' | { status: number; code: string };
  /** How many requests it breaks; 1 when not given. */
  times?: number;
}

export interface FaultProxy {
  endpoint: string;
  add(rule: ProxyRule): void;
  /** Requests seen, by method (and faults applied, under "fault:<action>"). */
  counts: Map<string, number>;
  stop(): Promise<void>;
}

/** What a random workload's proxy does to one request: an action, or nothing. */
export type ProxyChance = (r: ProxyRequest) => ProxyRule['action'] | undefined;

export async function startFaultProxy(upstream: string, chance?: ProxyChance): Promise<FaultProxy> {
  const target = new URL(upstream);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const rules: (ProxyRule & { left: number })[] = [];
  const counts = new Map<string, number>();
  const count = (k: string) => counts.set(k, (counts.get(k) ?? 0) + 1);
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const r: ProxyRequest = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers };
    count(r.method);
    const rule = rules.find((x) => x.left > 0 && x.match(r));
    if (rule) rule.left--;
    const action = rule ? rule.action : chance?.(r);
    if (action === 'reset') {
      count('fault:reset');
      req.socket.destroy();
      return;
    }
    if (action && typeof action === 'object') {
      count(`fault:${action.status}`);
      req.resume();
      req.on('end', () => {
        const body = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${action.code}</Code><Message>injected by the test proxy</Message></Error>`;
        res.writeHead(action.status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      });
      return;
    }
    const up = request({ host: target.hostname, port: target.port, method: r.method, path: r.url, headers: req.headers, agent }, (ur) => {
      if (action === 'drop-response') {
        count('fault:drop-response');
        ur.resume();
        ur.on('end', () => req.socket.destroy());
        return;
      }
      res.writeHead(ur.statusCode ?? 502, ur.headers);
      ur.pipe(res);
    });
    up.on('error', () => req.socket.destroy());
    req.pipe(up);
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    add: (rule) => rules.push({ ...rule, left: rule.times ?? 1 }),
    counts,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
