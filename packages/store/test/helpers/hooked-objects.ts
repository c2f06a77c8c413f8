/**
 * An object store wrapped for tests that need to place one server's calls in time: a hook
 * before each call (await it to stall the call, throw to fail it), listings that hide what a
 * server has not seen yet, and a hook on each failure. It outlives the Stores opened on it:
 * closing it closes nothing (the test owns the inner store).
 */
import { ForwardingObjectStore, type ObjectOp } from '../../src/objects/forwarding-objects.js';
import type { ListOptions, ListPage } from '../../src/objects/object-store.js';

export class HookedObjectStore extends ForwardingObjectStore {
  /** Runs before every call: a promise stalls it, a throw fails it. */
  before: (op: ObjectOp, key: string) => Promise<void> | void = () => undefined;
  /** Listings of prefixes it answers true for come back empty (a server that sees nothing new). */
  hide: (prefix: string) => boolean = () => false;
  /** Keys listings leave out (a storage whose listings lag behind its writes, one key at a time). */
  unlisted: (key: string) => boolean = () => false;
  /** Told every failure, before it reaches the caller. */
  failed: (op: ObjectOp, key: string, e: unknown) => void = () => undefined;

  override list(prefix: string, options?: ListOptions): Promise<ListPage> {
    return this.run('list', prefix, async () => {
      if (this.hide(prefix)) return { objects: [], more: false };
      const page = await this.inner.list(prefix, options);
      return { ...page, objects: page.objects.filter((o) => !this.unlisted(o.key)) };
    });
  }

  override async close(): Promise<void> {}

  protected async run<T>(op: ObjectOp, key: string, call: () => Promise<T>): Promise<T> {
    try {
      await this.before(op, key);
      return await call();
    } catch (e) {
      this.failed(op, key, e);
      throw e;
    }
  }
}

/** A gate a hook can wait at: `reached` resolves when the first call arrives, `open()` lets every call through. */
export function gate(): { wait: () => Promise<void>; reached: Promise<void>; open: () => void } {
  let arrived!: () => void;
  let opened!: () => void;
  const reached = new Promise<void>((r) => (arrived = r));
  const passage = new Promise<void>((r) => (opened = r));
  return {
    wait: () => {
      arrived();
      return passage;
    },
    reached,
    open: () => opened(),
  };
}
