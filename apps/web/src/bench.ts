/**
 * The page `pnpm bench browser` drives: the same store worker as the demo, with hooks to
 * start from an empty store and to time ingest of data the benchmark serves. Times cover the
 * `add` call only (File -> stream -> chunk, hash, compress -> OPFS packs + SQLite commit);
 * and embedding texts with the store worker's model (onnxruntime-web on its own worker).
 */
import { connect } from './client.js';

const store = connect(() => undefined);

async function files(url: string, sizes: number[] | undefined, name: string): Promise<File[]> {
  const blob = await (await fetch(url)).blob();
  if (!sizes) return [new File([blob], name)];
  const out: File[] = [];
  let at = 0;
  sizes.forEach((size, i) => {
    out.push(new File([blob.slice(at, at + size)], `${name}-${i}`));
    at += size;
  });
  return out;
}

Object.assign(window, {
  kuraBench: {
    /**
     * Opens the store and waits for the model to load (or be found missing): loading it is
     * seconds of CPU on the page's workers, which must not fall inside a timed ingest.
     */
    async ready() {
      await store.open();
      const deadline = performance.now() + 120_000;
      while ((await store.indexing()).semantic.state === 'loading' && performance.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      return true;
    },
    /**
     * Erases the store, then times adding the data at `url` (as one file, or cut into `sizes`).
     * Erased again after: the text just added would otherwise be embedded in the background
     * while the benchmark times Node's store on the same cores (it halved Node's figures).
     */
    async ingest(url: string, sizes?: number[]) {
      await store.erase();
      const list = await files(url, sizes, 'f');
      const t = performance.now();
      const outcome = await store.add(
        list.map((file, i) => ({ file, path: `bench/${i}` })),
        [],
      );
      const ms = performance.now() - t;
      const stats = await store.stats();
      await store.erase();
      return { ms, outcome, stats };
    },
    /**
     * Times embedding `texts` one at a time with the store worker's model (a first call warms
     * it), on an empty store: no background embedding of earlier adds shares the model's worker.
     */
    async embed(texts: string[]) {
      await store.erase();
      await store.timeEmbedding(texts.slice(0, 2));
      return store.timeEmbedding(texts);
    },
  },
});
