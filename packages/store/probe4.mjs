import { Store } from '@kura/store';
import { rmSync } from 'node:fs';
rmSync('/tmp/kp4', { recursive: true, force: true });
const s = await Store.init('/tmp/kp4');
const N = 15000;
const docs = Array.from({ length: N }, (_, i) => { const b = new Uint8Array(1024); for (let j = 0; j < 1024; j += 4) { const v = Math.imul(i * 1024 + j + 7, 2654435761) >>> 0; b[j] = v; b[j+1] = v >>> 8; b[j+2] = v >>> 16; b[j+3] = v >>> 24; } return b; });
for (const d of docs) await s.put(d);
await s.close();
