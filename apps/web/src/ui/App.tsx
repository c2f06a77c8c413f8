/** The page: state, the worker connection, and the sections. */
import type { DamagedDocument, GcReport, SnapshotInfo, StoreStats, VerifyReport } from '@kura/store/browser';
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { connect, StoreCallError } from '../client.js';
import type { Added, Progress, SearchMode, Semantic, WorkerEvent } from '../protocol.js';
import type { FileToAdd } from '../worker/store.worker.js';
import type { SyncReport, SyncTarget } from '../worker/sync.js';
import { AddPanel } from './AddPanel.js';
import { Details, type DetailsData } from './Details.js';
import { Documents, type Indexing, type ListState, type Query } from './Documents.js';
import { Maintenance } from './Maintenance.js';
import { Snapshots } from './Snapshots.js';
import { SyncPanel } from './SyncPanel.js';
import { Totals } from './Totals.js';

/** What a person should read for each error code the worker reports. */
function explain(e: unknown): string {
  if (!(e instanceof StoreCallError)) return (e as Error)?.message ?? String(e);
  switch (e.code) {
    case 'STORAGE_UNAVAILABLE':
      return `This browser cannot keep a store here: ${e.message}. Try a current Chrome, Edge or Firefox outside a private window.`;
    case 'STORE_LOCKED':
      return 'The store is open in another tab or window of this site. Close it there, then reload this page.';
    case 'STORAGE_FULL':
      return e.message.charAt(0).toUpperCase() + e.message.slice(1) + '.';
    case 'CORRUPT_DATA':
      // (The store's messages name the CLI's remedies; the page offers its own.)
      if (e.reason === 'database') return 'The store\'s database is damaged. Nothing is lost: it is made from the store\'s log, which holds everything. Rebuild it below.';
      if (e.reason === 'log' || e.reason === 'config' || e.reason === 'unauthentic') return `The store's ${e.reason === 'config' ? 'configuration' : 'log'} is damaged: ${e.message.replace(/ ?\(?kura rebuild[^;)]*\)?/g, '')}. This page cannot repair it; Erase below starts an empty store (everything in this one is lost).`;
      return `Damaged data: ${e.message}. Run Verify to see everything that is affected.`;
    case 'SYNC_FAILED':
      return `Sync failed: ${e.message}`;
    case 'MODEL_UNAVAILABLE':
      return `Search by meaning is not available here: ${e.message}. Search by keywords still works.`;
    default:
      return e.message;
  }
}

export function App() {
  const [ready, setReady] = useState(false);
  const [fatal, setFatal] = useState<string>();
  /** Why the store could not be opened, when a rebuild or an erase is the way back. */
  const [fatalCause, setFatalCause] = useState<{ code: string; reason?: string | undefined }>();
  const [error, setError] = useState<string>();
  const [errorRebuild, setErrorRebuild] = useState(false);
  const [busy, setBusy] = useState(false);
  const [stats, setStats] = useState<StoreStats>();
  const [storage, setStorage] = useState<{ usage: number; quota: number; persisted: boolean }>();
  const [progress, setProgress] = useState<Record<string, Progress | undefined>>({});
  const [added, setAdded] = useState<Added[]>([]);
  const [query, setQuery] = useState<Query>({ q: '', tag: '', mode: 'hybrid' });
  const [indexing, setIndexing] = useState<Indexing>();
  const [list, setList] = useState<ListState>();
  const [tags, setTags] = useState<{ tag: string; entries: number }[]>([]);
  const [details, setDetails] = useState<DetailsData>();
  const [gc, setGc] = useState<GcReport>();
  const [snapshots, setSnapshots] = useState<SnapshotInfo[]>([]);
  const [verify, setVerify] = useState<Omit<VerifyReport, 'damagedDocuments'> & { damagedDocuments: (DamagedDocument & { path: string | null })[] }>();
  const [sync, setSync] = useState<{ kind: 'push' | 'pull'; report: SyncReport }>();
  const addedRef = useRef<Added[]>([]);

  const onEvent = useCallback((e: WorkerEvent) => {
    if (e.type === 'progress') setProgress((p) => ({ ...p, [e.task]: e }));
    else if (e.type === 'added') {
      addedRef.current = [e, ...addedRef.current].slice(0, 200);
      setAdded(addedRef.current);
    }
  }, []);
  const store = useMemo(() => connect(onEvent), [onEvent]);

  const refresh = useCallback(
    async (q = query) => {
      const [s, l, t, st, sn] = await Promise.all([store.stats(), store.list({ ...q }), store.tags(), store.storage(), store.snapshots()]);
      setStats(s);
      setList(l);
      setTags(t);
      setStorage(st);
      setSnapshots(sn);
    },
    [store, query],
  );

  /** Runs a worker task with the page marked busy; failures become the error banner. */
  const run = useCallback(async <T,>(task: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(undefined);
    try {
      return await task();
    } catch (e) {
      setError(explain(e));
      // A database found damaged mid-use is rebuilt as one found at opening is (the banner's button).
      if (e instanceof StoreCallError && e.code === 'CORRUPT_DATA' && e.reason === 'database') setErrorRebuild(true);
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);

  useEffect(() => {
    (async () => {
      try {
        await store.open();
        await navigator.storage?.persist?.().catch(() => false); // ask to be kept under storage pressure
        await refresh();
        setReady(true);
      } catch (e) {
        setFatal(explain(e));
        if (e instanceof StoreCallError && e.code === 'CORRUPT_DATA') setFatalCause({ code: e.code, reason: e.reason });
      }
    })();
  }, []);

  /** The way back from a store that cannot be opened: its database rebuilt from the log, or the store erased. */
  const recover = useCallback(
    async (how: 'rebuild' | 'erase') => {
      if (how === 'erase' && !confirm('Erase this store? Every document, version and snapshot in this browser\'s store is deleted.')) return;
      setBusy(true);
      try {
        await (how === 'rebuild' ? store.rebuild() : store.erase());
        setFatal(undefined);
        setFatalCause(undefined);
        setError(undefined);
        setErrorRebuild(false);
        await refresh();
        setReady(true);
      } catch (e) {
        // What failed now decides the way back (its buttons, or none), and the page stops
        // asking the store for its state.
        setReady(false);
        setFatal(explain(e));
        setFatalCause(e instanceof StoreCallError && e.code === 'CORRUPT_DATA' ? { code: e.code, reason: e.reason } : undefined);
      } finally {
        setBusy(false);
      }
    },
    [store, refresh],
  );

  // What indexing has left (text to extract, documents to embed) and whether the model is
  // there, asked every second: embedding runs in the background after adds.
  useEffect(() => {
    if (!ready) return;
    let live = true;
    const ask = () =>
      store.indexing().then(
        (i) => live && setIndexing(i),
        () => undefined,
      );
    void ask();
    const timer = setInterval(ask, 1000);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [ready, store]);

  // Without the model, searches are by keyword (the other modes would only fail).
  useEffect(() => {
    if (indexing?.semantic.state === 'unavailable' && query.mode !== 'keyword') setQuery((q) => ({ ...q, mode: 'keyword' }));
  }, [indexing?.semantic.state]);

  const onAdd = (files: FileToAdd[], t: string[]) =>
    run(async () => {
      setProgress((p) => ({ ...p, add: undefined }));
      await store.add(files, t);
      await refresh();
    });

  const onQuery = (q: Query) => {
    setQuery(q);
    run(() => refresh(q));
  };

  const onMore = () =>
    run(async () => {
      const next = await store.list({ ...query, cursor: list!.nextCursor! });
      setList({ ...next, items: [...list!.items, ...next.items] });
    });

  /** `ref`: an entry's path, or a digest (a put without a path, or an older version's content). */
  const onOpen = (ref: string | { path: string; version: number }) => run(async () => setDetails(await store.details(ref)));

  const onDownload = (digest: string, named?: string) =>
    run(async () => {
      const { blob, name } = await store.download(digest, named);
      const url = URL.createObjectURL(blob);
      const a = document.createElement('a');
      a.href = url;
      a.download = name;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    });

  const onDelete = (ref: string) =>
    // A path goes with all its versions: asked first (one click deleted it all: a trial).
    confirm(`Delete ${ref}${ref.startsWith('sha256:') ? '' : ' and all its versions'}? Its bytes go at the next GC.`) &&
    run(async () => {
      await store.delete(ref);
      if (details && (details.info.path ?? details.info.digest) === ref) setDetails(undefined);
      await refresh();
    });

  const onTags = (ref: string, add: string[], remove: string[]) =>
    run(async () => {
      if (add.length) await store.addTags(ref, add);
      if (remove.length) await store.removeTags(ref, remove);
      setDetails(await store.details(ref));
      await refresh();
    });

  const onSnapshot = (files: FileToAdd[]) =>
    run(async () => {
      setProgress((p) => ({ ...p, snapshot: undefined }));
      await store.snapshot(files);
      await refresh();
    });

  const onGc = () =>
    run(async () => {
      setGc(await store.gc());
      await refresh();
    });

  const onVerify = () =>
    run(async () => {
      setProgress((p) => ({ ...p, verify: undefined }));
      setVerify(await store.verify());
    });

  const onErase = () => {
    if (!confirm('Erase every document in this browser store? This cannot be undone.')) return;
    run(async () => {
      await store.erase();
      addedRef.current = [];
      setAdded([]);
      setGc(undefined);
      setVerify(undefined);
      await refresh();
    });
  };

  const onSync = (kind: 'push' | 'pull', target: SyncTarget) =>
    run(async () => {
      setProgress((p) => ({ ...p, push: undefined, pull: undefined }));
      setSync({ kind, report: kind === 'push' ? await store.push(target) : await store.pull(target) });
      await refresh();
    });

  return (
    <>
      <header class="top">
        <h1>
          Kura <span class="muted">· a deduplicating store in your browser</span>
        </h1>
        <p class="muted small" data-testid="status">
          {fatal ? 'Unavailable' : ready ? (busy ? 'Working…' : 'Ready') : 'Opening the store…'}
        </p>
      </header>
      <main>
        {fatal ? (
          <div class="banner" role="alert" data-testid="fatal">
            <p>{fatal}</p>
            {fatalCause ? (
              <p>
                {fatalCause.reason === 'database' ? (
                  <button disabled={busy} onClick={() => void recover('rebuild')} data-testid="rebuild">
                    Rebuild the database from the log
                  </button>
                ) : null}{' '}
                <button class="danger" disabled={busy} onClick={() => void recover('erase')} data-testid="erase-damaged">
                  Erase this store
                </button>
              </p>
            ) : null}
          </div>
        ) : null}
        {error ? (
          <p class="banner" role="alert" data-testid="error">
            {error}{' '}
            {errorRebuild ? (
              <button disabled={busy} onClick={() => void recover('rebuild')} data-testid="rebuild">
                Rebuild the database from the log
              </button>
            ) : null}{' '}
            <button
              class="link"
              onClick={() => {
                setError(undefined);
                setErrorRebuild(false);
              }}
            >
              Dismiss
            </button>
          </p>
        ) : null}
        {fatal ? null : (
          <div class="grid" aria-busy={busy}>
            <div class="col">
              <AddPanel busy={busy || !ready} progress={progress.add} added={added} onAdd={onAdd} />
              <Documents list={list} tags={tags} query={query} indexing={indexing} busy={busy} onQuery={onQuery} onMore={onMore} onOpen={onOpen} onDownload={onDownload} onDelete={onDelete} />
            </div>
            <div class="col side">
              <Totals stats={stats} storage={storage} />
              <Snapshots busy={busy || !ready} snapshots={snapshots} progress={progress.snapshot} onSnapshot={onSnapshot} />
              <Maintenance busy={busy || !ready} gc={gc} verify={verify} progress={progress.verify} onGc={onGc} onVerify={onVerify} onErase={onErase} />
              <SyncPanel busy={busy || !ready} progress={progress.push ?? progress.pull} report={sync} onSync={onSync} />
            </div>
          </div>
        )}
        {details ? <Details data={details} onClose={() => setDetails(undefined)} onDownload={onDownload} onOpen={onOpen} onTags={onTags} /> : null}
      </main>
    </>
  );
}
