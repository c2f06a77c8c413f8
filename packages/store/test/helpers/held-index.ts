/**
 * Holds a store's next keyword-index batch in flight: its rows are written (as a writer thread
 * takes a call at once) and the answer waits until `release()` — what an indexer run sees when
 * something else happens to the catalog between its write and its queue rows' deletion.
 */
import type { Store } from '../../src/node/index.js';
import type { IndexRow } from '../../src/search/index-writer.js';
import type { StoreContext } from '../../src/store-context.js';

export function holdNextIndexBatch(store: Store): { entered: Promise<void>; release: () => void } {
  const writer = (store as unknown as { ctx: StoreContext }).ctx.search.writer!;
  const write = writer.write.bind(writer);
  let inFlight!: () => void;
  const entered = new Promise<void>((r) => (inFlight = r));
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let holding = true;
  writer.write = async (rows: readonly IndexRow[]) => {
    const written = write(rows);
    if (!holding) return written;
    holding = false;
    inFlight();
    await held;
    return written;
  };
  return { entered, release };
}
