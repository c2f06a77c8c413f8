import { Store } from '@kura/store';
import { Ingester } from '@kura/core';
import { rmSync } from 'node:fs';
rmSync('/tmp/kp3', { recursive: true, force: true });
const s = await Store.init('/tmp/kp3');
const N = 10000;
const docs = Array.from({ length: N }, (_, i) => { const b = new Uint8Array(1024); for (let j = 0; j < 1024; j += 4) { const v = Math.imul(i * 1024 + j + 7, 2654435761) >>> 0; b[j] = v; b[j+1] = v >>> 8; b[j+2] = v >>> 16; b[j+3] = v >>> 24; } return b; });
let t = performance.now();
for (const d of docs) { const g = new Ingester({}); g.update(d); g.finish(); }
console.log('ingester only (zstd)', ((performance.now() - t) / N * 1000).toFixed(1), 'us/op');
t = performance.now();
for (const d of docs) { const g = new Ingester({ compression: false }); g.update(d); g.finish(); }
console.log('ingester only (raw)', ((performance.now() - t) / N * 1000).toFixed(1), 'us/op');
t = performance.now();
for (let i = 0; i < 2000; i++) await new Promise((r) => setImmediate(r));
console.log('setImmediate hop', ((performance.now() - t) / 2000 * 1000).toFixed(1), 'us');
t = performance.now();
for (const d of docs) await s.put(d);
console.log('put sequential', ((performance.now() - t) / N * 1000).toFixed(1), 'us/op');
await s.close();
