/**
 * The thread node/grep-away.ts scans on: it opens the store read-only (once per directory) and
 * runs the scan of search/grep.ts on the entries each message names, answering their events
 * and what each entry counted.
 */
import { parentPort } from 'node:worker_threads';
import { LineMatcher } from '@kura/core';
import { Store } from './index.js';
import { WHOLE_MAX, emptySummary, grepEntry, type Entry, type GrepEvent, type GrepRun } from '../search/grep.js';
import { shareable } from '../search/text-cache.js';
import type { GrepBatch, GrepBatchAnswer, GrepWorkerReady, ScannedEntry } from './grep-away.js';

const stores = new Map<string, Promise<Store>>();
let matcher: { pattern: string; ignoreCase: boolean; m: LineMatcher } | undefined;

function matcherFor(pattern: string, ignoreCase: boolean): LineMatcher {
  if (matcher?.pattern === pattern && matcher.ignoreCase === ignoreCase) return matcher.m;
  matcher?.m.dispose();
  matcher = { pattern, ignoreCase, m: new LineMatcher(pattern, ignoreCase) };
  return matcher.m;
}

async function scan(m: GrepBatch): Promise<GrepBatchAnswer> {
  let opening = stores.get(m.dir);
  if (!opening) {
    stores.set(m.dir, (opening = Store.open(m.dir, { readonly: true })));
    opening.catch(() => stores.delete(m.dir)); // (tried again by the next batch)
  }
  // The texts lent with the batch are matched as they are; those read here go back with the
  // answer, in shared memory, to be kept by the store's thread (text-cache.ts).
  const read: Record<string, Uint8Array> = {};
  const source = (await opening).grepSource({
    get: (key) => m.texts[key],
    put: (key, bytes) => {
      if (bytes.length <= WHOLE_MAX) read[key] = shareable(bytes);
    },
  });
  const lines = matcherFor(m.pattern, m.ignoreCase);
  const entries: ScannedEntry[] = [];
  for (const e of m.entries as Entry[]) {
    const summary = emptySummary();
    const events: GrepEvent[] = [];
    for await (const run of grepEntry(source, e, lines, m.run as GrepRun, summary)) for (const ev of run) events.push(ev);
    entries.push({ events, files: summary.files, bytes: summary.bytes });
  }
  return { id: m.id, entries: JSON.stringify(entries), texts: read };
}

/** Batches one after another: a batch of another pattern must not swap the matcher under one in progress. */
let tail: Promise<unknown> = Promise.resolve();

// Loaded: the pool sends batches here from now on without waiting for the modules.
parentPort!.postMessage({ ready: true } satisfies GrepWorkerReady);

parentPort!.on('message', (m: GrepBatch) => {
  const run = tail.then(() => scan(m));
  tail = run.catch(() => undefined);
  run.then(
    (answer) => parentPort!.postMessage(answer),
    (e: Error & { code?: string }) => parentPort!.postMessage({ id: m.id, error: { message: e.message, ...(e.code ? { code: e.code } : {}) } }),
  );
});
