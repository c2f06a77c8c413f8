/** Runs the PackStore conformance checks against OpfsPackStore, each in a fresh directory. */
import { OpfsPackStore } from '../../../../packages/store/src/browser/opfs-packs.js';
import { packChecks } from '../../../../packages/store/test/conformance/packs.js';

const results: { name: string; error?: string }[] = [];
const root = await navigator.storage.getDirectory();
let n = 0;
for (const check of packChecks) {
  try {
    await check.run(async () => new OpfsPackStore(await root.getDirectoryHandle(`conformance-${Date.now()}-${n++}`, { create: true })));
    results.push({ name: check.name });
  } catch (e) {
    results.push({ name: check.name, error: (e as Error).stack ?? String(e) });
  }
}
(self as unknown as Worker).postMessage(results);
