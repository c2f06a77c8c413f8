import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
const { Store } = await import('@kura/store');
const { documents } = await import(process.cwd() + '/lib/documents.mjs');
const { startS3Server } = await import(process.cwd() + '/lib/s3-server.mjs');
const srv = await startS3Server('versitygw');
// pin the server (and its children) to core 1, this process to core 0
spawnSync('bash', ['-c', `for p in $(pgrep -f versitygw); do taskset -a -p -c 1 $p >/dev/null; done; taskset -a -p -c 0 ${process.pid} > /dev/null`]);
const N = 4000, C = 32;
const docs = documents(N * 6, 1024, 1024);
const root = mkdtempSync(join(tmpdir(), 's3p-'));
let k = 0;
const prof = process.argv[2];
async function run(open, label, profile) {
  const store = await open();
  let next = 0; const base = (k++) * N;
  let s;
  if (profile) { const { Session } = await import('node:inspector/promises'); s = new Session(); s.connect(); await s.post('Profiler.enable'); await s.post('Profiler.start'); }
  const c0 = process.cpuUsage(); const t = performance.now();
  await Promise.all(Array.from({ length: C }, async () => { for (let i = next++; i < N; i = next++) await store.put(docs[base + i]); }));
  const w = performance.now() - t; const c = process.cpuUsage(c0);
  console.log(label, Math.round(N / (w / 1000)), '/s', ((c.user + c.system) / N).toFixed(0), 'us cpu/put');
  if (s) { const { profile } = await s.post('Profiler.stop'); (await import('node:fs')).mkdirSync(profile_dir(label), { recursive: true }); (await import('node:fs')).writeFileSync(profile_dir(label) + '/x.cpuprofile', JSON.stringify(profile)); }
  await store.close();
}
const profile_dir = (l) => `${prof}-${l}`;
let p = 0;
for (let r = 0; r < 2; r++) {
  await run(() => Store.init(join(mkdtempSync(join(root, 'l-')), 's')), 'local', prof && r === 1);
  await run(() => Store.init(`s3://${srv.bucket}/p${p++}`, { cacheDir: mkdtempSync(join(root, 'c-')), s3: { endpoint: srv.endpoint, credentials: srv.credentials } }), 's3', prof && r === 1);
}
await srv.stop();
process.exit(0);
