import { Store } from '@kura/store';
import { Ingester } from '@kura/core';
import { rmSync } from 'node:fs';
const WORDS = 'kura store chunk digest the of and content address pack fn let const return { } ( ) ; import export function while for if else'.split(' ').map((w) => new TextEncoder().encode(w + ' '));
let seed = 1; const rnd = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0);
function text(n) { const out = new Uint8Array(n + 16); let at = 0; while (at < n) { const w = WORDS[rnd() % WORDS.length]; out.set(w, at); at += w.length; if (rnd() % 8 === 0) { const num = new TextEncoder().encode(String(rnd())); out.set(num, at); at += num.length; } } return out.subarray(0, n); }
function random(n) { const out = new Uint8Array(n); for (let i = 0; i < n; i += 4) { const v = rnd(); out[i] = v; out[i+1] = v>>8; out[i+2] = v>>16; out[i+3] = v>>24; } return out; }
const MiB = 1 << 20;
const t1 = text(64 * MiB), r1 = random(64 * MiB);
for (const [name, data] of [['text', t1], ['random', r1]]) {
  for (const level of [1, 3, false]) {
    const t = performance.now(); const g = new Ingester({ compression: level }); let out = 0;
    for (let at = 0; at < data.length; at += MiB) for (const c of g.update(data.subarray(at, at + MiB))) out += c.payload.length;
    for (const c of g.finish()) out += c.payload.length;
    const dt = performance.now() - t;
    console.log(`ingester ${name} level ${level}: ${(64 / dt * 1000).toFixed(0)} MB/s, ratio ${(data.length / out).toFixed(2)}`);
  }
}
rmSync('/tmp/kp9', { recursive: true, force: true });
const s = await Store.init('/tmp/kp9');
for (const [name, data] of [['text', t1], ['random', r1]]) {
  const t = performance.now();
  await s.put((async function* () { for (let at = 0; at < data.length; at += MiB) yield data.subarray(at, at + MiB); })());
  console.log(`store.put ${name}: ${(64 / (performance.now() - t) * 1000).toFixed(0)} MB/s`);
}
await s.close();
