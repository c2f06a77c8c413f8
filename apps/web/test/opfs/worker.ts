/**
 * Runs the PackStore conformance checks against OpfsPackStore, each in a fresh directory; then
 * a whole store in OPFS loses its database and is rebuilt from its log; text is extracted; the
 * local model embeds as Node's does.
 */
import { BrowserStore, loadMiniLmOnWebWorker } from '../../../../packages/store/src/browser/index.js';
import { OpfsPackStore } from '../../../../packages/store/src/browser/opfs-packs.js';
import { packChecks } from '../../../../packages/store/test/conformance/packs.js';

const results: { name: string; error?: string; detail?: string }[] = [];
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
/** Paths, versions, tags, metadata, snapshots and search text; the database deleted; all the same after. */
async function rebuiltFromLog(): Promise<void> {
  const name = `rebuild${Date.now()}`;
  const enc = (t: string) => new TextEncoder().encode(t);
  const s = await BrowserStore.openOpfs(name, { init: {} });
  await s.put(enc('first version of alpha, about herons'), { path: 'notes/alpha.txt', tags: ['birds'], meta: { by: 'ann' } });
  await s.put(enc('second version of alpha, about herons and egrets'), { path: 'notes/alpha.txt' });
  await s.put(enc('a pathless upload'), { tags: ['loose'] });
  await s.put(enc('same bytes'), { path: 'x/one' });
  await s.put(enc('same bytes'), { path: 'x/two' });
  await s.setMeta('x/two', { k: 'v' });
  await s.snapshotFiles([{ path: 'd/a.txt', file: new Blob(['snapshotted herons']) }, { path: 'b.txt', file: new Blob(['snap b']) }], { label: 'snap' });
  const view = async (st: BrowserStore) =>
    JSON.stringify({
      list: (await st.list({ limit: 1000 })).items,
      versions: await st.versions('notes/alpha.txt'),
      snapshots: await st.snapshots(),
      search: (await st.search('herons')).map((h) => [h.path, h.digest]),
      stats: await st.stats(),
    });
  await s.close(); // (its open pack is sealed: the view is of the store as closed)
  const reopened = await BrowserStore.openOpfs(name);
  const before = await view(reopened);
  await reopened.close();
  const { deletedFiles } = await BrowserStore.rebuild(name);
  if (deletedFiles < 1) throw new Error('rebuild deleted no database file');
  const again = await BrowserStore.openOpfs(name);
  const after = await view(again);
  await again.close();
  await BrowserStore.destroy(name);
  if (after !== before) throw new Error(`the rebuilt catalog differs:\nbefore ${before}\nafter  ${after}`);
  if ((JSON.parse(before) as { search: unknown[] }).search.length !== 1) throw new Error(`the search finds ${before}`);
}
/**
 * A rebuild that cannot replace the database keeps it: a log damaged inside fails the rebuild
 * and the store opens as before; a log shorter than what the database applied is refused
 * (log-behind) unless forced. (It deleted the database first and lost both: a trial.) And, from
 * the same trial, a put or snapshot of something that is no Blob is INVALID_INPUT.
 */
async function rebuildKeepsWhatTheLogCannotReplace(): Promise<void> {
  const enc = (t: string) => new TextEncoder().encode(t);
  const made = async (name: string) => {
    const s = await BrowserStore.openOpfs(name, { init: {} });
    for (let i = 0; i < 10; i++) await s.put(enc(`log doc ${i}`), { path: `d/${i}` });
    await s.close();
    const log = await (await (await (await navigator.storage.getDirectory()).getDirectoryHandle('kura')).getDirectoryHandle(name)).getDirectoryHandle('log');
    const names: string[] = [];
    for await (const [n] of (log as unknown as { entries(): AsyncIterable<[string, FileSystemHandle]> }).entries()) names.push(n);
    const segment = await log.getFileHandle(names.sort()[0]!);
    return (segment as unknown as { createSyncAccessHandle(): Promise<{ getSize(): number; read(b: Uint8Array, o: { at: number }): number; write(b: Uint8Array, o: { at: number }): number; truncate(n: number): void; flush(): void; close(): void }> }).createSyncAccessHandle();
  };
  const paths = async (name: string) => {
    const s = await BrowserStore.openOpfs(name);
    try {
      return (await s.list({ limit: 100 })).items.map((e) => e.path).sort();
    } finally {
      await s.close();
    }
  };
  const code = (e: unknown) => `${(e as { code?: string }).code} ${(e as { reason?: string }).reason ?? ''}`.trim();
  // Damage inside the log: the rebuild fails, and the store opens with all ten, as before.
  const damaged = `rebuilddamaged${Date.now()}`;
  const h = await made(damaged);
  const at = Math.floor(h.getSize() / 3);
  const b = new Uint8Array(4);
  h.read(b, { at });
  h.write(b.map((x) => x ^ 0xff), { at });
  h.flush();
  h.close();
  if ((await paths(damaged)).length !== 10) throw new Error('the damaged store did not open with its ten documents');
  const failed = await BrowserStore.rebuild(damaged).then(() => 'rebuilt', code);
  if (!failed.startsWith('CORRUPT_DATA')) throw new Error(`a rebuild from a log damaged inside answered ${failed}`);
  if ((await paths(damaged)).length !== 10) throw new Error('after the failed rebuild the store does not open with its ten documents');
  // Forced, the damage is cut out as Node's `kura rebuild --force` cuts it (the messages named
  // a command the browser did not have): the commits before it kept, what follows it kept
  // beside the log, byte for byte.
  const segBefore = await (async () => {
    const log = await (await (await (await navigator.storage.getDirectory()).getDirectoryHandle('kura')).getDirectoryHandle(damaged)).getDirectoryHandle('log');
    const names: string[] = [];
    for await (const [n] of (log as unknown as { entries(): AsyncIterable<[string, FileSystemHandle]> }).entries()) names.push(n);
    return new Uint8Array(await (await (await log.getFileHandle(names.sort()[0]!)).getFile()).arrayBuffer());
  })();
  const mended = await BrowserStore.rebuild(damaged, { force: true });
  const kept = await paths(damaged);
  if (!(kept.length >= 1 && kept.length < 10) || mended.cut?.length !== 1) throw new Error(`forced over damage: ${JSON.stringify(mended)}, ${JSON.stringify(kept)}`);
  const cutAt = Number(mended.cut[0]!.split('-').pop());
  const cutBytes = new Uint8Array(await (await (await (await (await (await navigator.storage.getDirectory()).getDirectoryHandle('kura')).getDirectoryHandle(damaged)).getFileHandle(mended.cut[0]!)).getFile()).arrayBuffer());
  if (!(cutAt > 0 && cutAt <= at) || cutBytes.length !== segBefore.length - cutAt || cutBytes.some((x, i) => x !== segBefore[cutAt + i])) throw new Error(`the cut at ${cutAt} (damage at ${at}) did not keep the log's bytes after it`);
  await BrowserStore.destroy(damaged);
  // A log cut short: refused (log-behind), the database kept; forced, the log's state.
  const cut = `rebuildcut${Date.now()}`;
  const c = await made(cut);
  c.truncate(Math.floor(c.getSize() * 0.6));
  c.flush();
  c.close();
  // A put of something that is no Blob is INVALID_INPUT, at once (it failed deep in the read, uncoded).
  {
    const s = await BrowserStore.openOpfs(`notablob${Date.now()}`, { init: {} });
    const said = (f: () => unknown) => {
      try {
        f();
        return 'accepted';
      } catch (e) {
        return code(e);
      }
    };
    const a = said(() => s.putBlobs([{ blob: 'not a blob' as unknown as Blob, meta: { path: 'x' } }]));
    const b = await s.snapshotFiles([{ path: 'q', file: 'str' as unknown as File }]).then(() => 'accepted', code);
    await s.close();
    if (a !== 'INVALID_INPUT' || b !== 'INVALID_INPUT') throw new Error(`putBlobs of a string: ${a}; snapshotFiles of a string: ${b}`);
  }
  const refused = await BrowserStore.rebuild(cut).then(() => 'rebuilt', code);
  if (refused !== 'CORRUPT_DATA log-behind') throw new Error(`a rebuild from a log shorter than the database answered ${refused}`);
  const forced = await BrowserStore.rebuild(cut, { force: true });
  const left = await paths(cut);
  if (!(left.length > 0 && left.length < 10) || forced.seq < 1) throw new Error(`forced: ${JSON.stringify(forced)}, ${JSON.stringify(left)}`);
  await BrowserStore.destroy(cut);
}
try {
  await rebuildKeepsWhatTheLogCannotReplace();
  results.push({ name: 'a rebuild keeps what the log cannot replace' });
} catch (e) {
  results.push({ name: 'a rebuild keeps what the log cannot replace', error: (e as Error).stack ?? String(e) });
}
/** PDF, DOCX and HTML files (made by the Node side of the test) found by words only inside them. */
async function extractsText(): Promise<void> {
  const name = `extract${Date.now()}`;
  const s = await BrowserStore.openOpfs(name, { init: {} });
  try {
    const fixture = async (f: string) => new Uint8Array(await (await fetch(new URL(`./fixtures/${f}`, import.meta.url))).arrayBuffer());
    await s.put(await fixture('doc.pdf'), { path: 'a/one' });
    await s.put(await fixture('doc.docx'), { path: 'a/two' });
    await s.put(await fixture('doc.html'), { path: 'a/three' });
    await s.put(new TextEncoder().encode('%PDF-1.4 nothing more'), { path: 'a/broken' });
    for (const [word, path] of [['quokkazeppelin', 'a/one'], ['wombatlantern', 'a/two'], ['numbatcarousel', 'a/three']]) {
      const found = (await s.search(word)).map((h) => h.path);
      if (JSON.stringify(found) !== JSON.stringify([path])) throw new Error(`${word} finds ${JSON.stringify(found)}, not ${path}; ${JSON.stringify(await s.indexStatus())}`);
    }
    const status = await s.indexStatus();
    if (JSON.stringify(status.extracted) !== JSON.stringify({ ok: 3, capped: 0, failed: 1 }) || status.problems[0]?.path !== 'a/broken') {
      throw new Error(`index status ${JSON.stringify(status)}`);
    }
  } finally {
    await s.close();
    await BrowserStore.destroy(name);
  }
}
try {
  await extractsText();
  results.push({ name: 'text extracted from PDF, DOCX and HTML' });
} catch (e) {
  results.push({ name: 'text extracted from PDF, DOCX and HTML', error: (e as Error).stack ?? String(e) });
}
/** What the Node side wrote (opfs-conformance.test.ts): its vectors and rankings, and the texts. */
interface NodeSide {
  texts: string[];
  vectors: number[][];
  docs: { path: string; text: string }[];
  questions: string[];
  rankings: Record<'semantic' | 'hybrid', string[][]>;
}

/**
 * The model on onnxruntime-web in a worker of its own: vectors within 1e-3 of Node's
 * (onnxruntime-node), and the same rankings on the same content. Returns what it measured.
 */
async function embedsLikeNode(): Promise<string> {
  const node = (await (await fetch(new URL('./fixtures/semantic.json', import.meta.url))).json()) as NodeSide;
  // Files that are not the pinned ones are refused (here the dev server's fallback page).
  const refused = await loadMiniLmOnWebWorker(new URL('fixtures/', self.location.href).href, () => new Worker(new URL('./embed.worker.ts', import.meta.url), { type: 'module' })).then(
    () => 'loaded',
    (e: { code?: string; message?: string }) => `${e.code}: ${e.message}`,
  );
  if (!/^MODEL_UNAVAILABLE: .*has sha256 [0-9a-f]{64}, not the pinned/.test(refused)) throw new Error(`a folder without the model: ${refused}`);
  const model = await loadMiniLmOnWebWorker(new URL('fixtures/model/', self.location.href).href, () => new Worker(new URL('./embed.worker.ts', import.meta.url), { type: 'module' }));
  try {
    let worst = 0;
    const t = performance.now();
    for (let i = 0; i < node.texts.length; i++) {
      const [v] = await model.embed([node.texts[i]!]);
      node.vectors[i]!.forEach((x, d) => (worst = Math.max(worst, Math.abs(x - v![d]!))));
    }
    const rate = node.texts.length / ((performance.now() - t) / 1000);
    if (!(worst <= 1e-3)) throw new Error(`a browser vector differs from Node's by ${worst} (> 1e-3)`);
    const name = `semantic${Date.now()}`;
    const s = await BrowserStore.openOpfs(name, { init: {} });
    try {
      for (const d of node.docs) await s.put(new TextEncoder().encode(d.text), { path: d.path });
      s.useEmbedder(model);
      for (const mode of ['semantic', 'hybrid'] as const) {
        for (let i = 0; i < node.questions.length; i++) {
          const got = (await s.search(node.questions[i]!, { mode, limit: 10 })).map((h) => h.path);
          if (JSON.stringify(got) !== JSON.stringify(node.rankings[mode][i])) throw new Error(`${mode} "${node.questions[i]}": browser ${JSON.stringify(got)}, Node ${JSON.stringify(node.rankings[mode][i])}`);
        }
      }
    } finally {
      await s.close();
      await BrowserStore.destroy(name);
    }
    return `largest difference from Node ${worst.toExponential(2)} over ${node.texts.length} vectors; ${rate.toFixed(1)} texts/s; ${node.questions.length * 2} rankings equal`;
  } finally {
    await model.close();
  }
}
try {
  results.push({ name: 'the model embeds as in Node', detail: await embedsLikeNode() });
} catch (e) {
  results.push({ name: 'the model embeds as in Node', error: (e as Error).stack ?? String(e) });
}
try {
  await rebuiltFromLog();
  results.push({ name: 'store rebuilt from its log' });
} catch (e) {
  results.push({ name: 'store rebuilt from its log', error: (e as Error).stack ?? String(e) });
}
(self as unknown as Worker).postMessage(results);
