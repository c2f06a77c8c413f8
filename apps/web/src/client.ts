/** The page's side of the store worker: typed calls and event subscriptions. */
import type { Call, ErrorData, Reply, WorkerEvent } from './protocol.js';
import type { StoreApi } from './worker/store.worker.js';

export class StoreCallError extends Error {
  readonly code: string;
  readonly reason: string | undefined;
  constructor(e: ErrorData) {
    super(e.message);
    this.name = e.name;
    this.code = e.code;
    this.reason = e.reason;
  }
}

type Methods = { [K in keyof StoreApi]: (...args: Parameters<StoreApi[K]>) => ReturnType<StoreApi[K]> };

export function connect(onEvent: (e: WorkerEvent) => void): Methods {
  const worker = new Worker(new URL('./worker/store.worker.ts', import.meta.url), { type: 'module', name: 'kura-store' });
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
  let nextId = 1;
  /** Calls made before the worker said it listens. */
  let queued: Call[] | undefined = [];
  worker.onmessage = (ev: MessageEvent<Reply | WorkerEvent>) => {
    const m = ev.data;
    // pdf.js, loaded in the worker to extract PDF text, announces itself on the worker's own
    // channel ({sourceName, targetName, action}): not ours.
    if (typeof m !== 'object' || m === null || !('type' in m || 'id' in m)) return;
    if ('type' in m) {
      if (m.type === 'ready') {
        queued?.forEach((c) => worker.postMessage(c));
        queued = undefined;
      } else onEvent(m);
      return;
    }
    const w = waiting.get(m.id);
    if (!w) return;
    waiting.delete(m.id);
    if (m.ok) w.resolve(m.value);
    else w.reject(new StoreCallError(m.error));
  };
  worker.onerror = (ev) => {
    // A worker that failed to load (e.g. no module workers) fails every pending call.
    const err = new StoreCallError({ code: 'WORKER_FAILED', name: 'Error', message: `the store worker failed: ${ev.message || 'could not start'}` });
    for (const w of waiting.values()) w.reject(err);
    waiting.clear();
  };
  return new Proxy({} as Methods, {
    get:
      (_t, method: string) =>
      (...args: unknown[]) =>
        new Promise((resolve, reject) => {
          const id = nextId++;
          waiting.set(id, { resolve, reject });
          const call: Call = { id, method, args };
          if (queued) queued.push(call);
          else worker.postMessage(call);
        }),
  });
}
