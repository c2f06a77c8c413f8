import { Store } from '@kura/store';
import { rmSync } from 'node:fs';
let seed = 1; const rnd = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0);
function random(n) { const out = new Uint8Array(n); for (let i = 0; i < n; i += 4) { const v = rnd(); out[i] = v; out[i+1] = v>>8; out[i+2] = v>>16; out[i+3] = v>>24; } return out; }
const MiB = 1 << 20; const r1 = random(256 * MiB);
rmSync('/tmp/kp10', { recursive: true, force: true });
const s = await Store.init('/tmp/kp10');
const t = performance.now();
await s.put((async function* () { for (let at = 0; at < r1.length; at += MiB) yield r1.subarray(at, at + MiB); })());
console.log(`store.put random: ${(256 / (performance.now() - t) * 1000).toFixed(0)} MB/s`);
await s.close();
