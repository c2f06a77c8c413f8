/**
 * A proxy in front of an S3 server that counts requests by method (and the bytes they sent),
 * for the `scaleout` suite's requests-per-operation figures. Headers pass unchanged (Host
 * included: SigV4 signatures still hold upstream).
 */
import { Agent, createServer, request } from 'node:http';

export async function startCountingProxy(upstream) {
  const target = new URL(upstream);
  const agent = new Agent({ keepAlive: true, maxSockets: 128 });
  const counts = new Map();
  let sent = 0;
  const server = createServer((req, res) => {
    counts.set(req.method, (counts.get(req.method) ?? 0) + 1);
    req.on('data', (d) => (sent += d.length));
    const up = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers, agent }, (ur) => {
      res.writeHead(ur.statusCode ?? 502, ur.headers);
      ur.pipe(res);
    });
    up.on('error', () => req.socket.destroy());
    req.pipe(up);
  });
  server.keepAliveTimeout = 30_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${server.address().port}`,
    /** Counts since the last reset: { GET, PUT, POST, HEAD, DELETE, total, bytesSent }. */
    take() {
      const out = Object.fromEntries(counts);
      out.total = [...counts.values()].reduce((a, b) => a + b, 0);
      out.bytesSent = sent;
      counts.clear();
      sent = 0;
      return out;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      agent.destroy();
    },
  };
}
