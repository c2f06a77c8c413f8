/**
 * A proxy in front of an S3 server that counts requests by method (and the bytes they sent),
 * for the `scaleout` suite's requests-per-operation figures. Headers pass unchanged (Host
 * included: SigV4 signatures still hold upstream).
 *
 * It runs in a worker thread: on the benchmark's own thread every request Kura sends would also
 * cost that thread the proxy's parsing and forwarding (~0.2 ms), a cost the local store beside
 * it and the peers (other processes) never pay.
 */
import { Agent, createServer, request } from 'node:http';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

if (!isMainThread && workerData?.countingProxy) serve(workerData.countingProxy.upstream);

export async function startCountingProxy(upstream) {
  const worker = new Worker(new URL(import.meta.url), { workerData: { countingProxy: { upstream } } });
  const waiting = [];
  const ready = new Promise((resolve, reject) => {
    worker.once('error', reject);
    worker.on('message', (m) => (m.port !== undefined ? resolve(m.port) : waiting.shift()?.(m.counts)));
  });
  const port = await ready;
  const ask = (type) =>
    new Promise((resolve) => {
      waiting.push(resolve);
      worker.postMessage({ type });
    });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    /** Counts since the last reset: { GET, PUT, POST, HEAD, DELETE, total, bytesSent }. */
    take: () => ask('take'),
    async stop() {
      await ask('stop');
      await worker.terminate();
    },
  };
}

function serve(upstream) {
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
  server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
  parentPort.on('message', ({ type }) => {
    if (type === 'take') {
      const out = Object.fromEntries(counts);
      out.total = [...counts.values()].reduce((a, b) => a + b, 0);
      out.bytesSent = sent;
      counts.clear();
      sent = 0;
      parentPort.postMessage({ counts: out });
    } else if (type === 'stop') {
      server.closeAllConnections();
      server.close(() => {
        agent.destroy();
        parentPort.postMessage({ counts: undefined });
      });
    }
  });
}
