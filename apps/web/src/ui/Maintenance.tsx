/** GC and verify, with their reports; erasing the whole store. */
import type { DamagedDocument, GcReport, VerifyReport } from '@kura/store/browser';
import type { Progress } from '../protocol.js';
import { ProgressBar } from './AddPanel.js';
import { bytes } from './format.js';

const plural = (n: number, word: string) => (n === 1 ? word : `${word}s`);

/** What verify found besides damaged chunks: the log, the database, packs, snapshot trees, key files, the search index. */
function otherDamage(v: Pick<VerifyReport, 'damagedLog' | 'damagedCatalog' | 'damagedPacks' | 'damagedTrees' | 'damagedKeys' | 'damagedSearchIndex'>): { what: string; message: string }[] {
  return [
    ...v.damagedLog.map((d) => ({ what: `the log${d.seq !== undefined ? ` (commit ${d.seq})` : ''}`, message: d.message })),
    ...(v.damagedCatalog ?? []).map((d) => ({ what: `the database${d.table ? ` (table ${d.table})` : ''}`, message: d.message })),
    ...v.damagedPacks.map((d) => ({ what: `pack ${d.pack}`, message: d.message })),
    ...v.damagedTrees.map((d) => ({ what: `snapshot tree ${d.digest.slice(0, 19)}…`, message: d.message })),
    ...(v.damagedKeys ?? []).map((d) => ({ what: `key file ${d.id}`, message: d.message })),
    ...(v.damagedSearchIndex ?? []).map((d) => ({ what: 'the search index', message: `${d.message}${d.remade ? ' (made again: every entry is being indexed anew)' : ''}` })),
  ];
}

export function Maintenance(props: {
  busy: boolean;
  gc: GcReport | undefined;
  verify: (Omit<VerifyReport, 'damagedDocuments'> & { damagedDocuments: (DamagedDocument & { path: string | null })[] }) | undefined;
  progress: Progress | undefined;
  onGc: () => void;
  onVerify: () => void;
  onErase: () => void;
}) {
  const v = props.verify;
  return (
    <section aria-labelledby="maint-h" class="card">
      <h2 id="maint-h">Maintenance</h2>
      <div class="row">
        <button onClick={props.onGc} disabled={props.busy}>
          Run GC
        </button>
        <button onClick={props.onVerify} disabled={props.busy}>
          Verify
        </button>
        <button class="danger" onClick={props.onErase} disabled={props.busy}>
          Erase store…
        </button>
      </div>
      <ProgressBar p={props.progress} label="Verifying" />
      {props.gc ? (
        <p data-testid="gc-report" role="status">
          GC: {props.gc.chunksRemoved} chunks removed, {props.gc.packsDeleted} packs deleted, {props.gc.packsCompacted} compacted, <strong>{bytes(props.gc.bytesFreed)}</strong> freed.
        </p>
      ) : null}
      {v ? (
        <div data-testid="verify-report" data-ok={String(v.ok)} role="status" class={v.ok ? 'ok' : 'bad'}>
          <p>
            Verify: {v.ok ? 'everything is intact' : 'damage found'} — {v.chunksChecked} chunks, {v.documentsChecked} documents, {v.treesChecked} trees, {bytes(v.bytesChecked)} re-hashed
            {v.catalogChecked ? (
              <>
                ; the database's <span data-testid="catalog-rows">{v.catalogRowsChecked}</span> rows compared with the log
              </>
            ) : null}
            .
          </p>
          {v.damagedChunks.length ? (
            <>
              <p>
                <strong data-testid="damaged-chunks">{v.damagedChunks.length}</strong> damaged {plural(v.damagedChunks.length, 'chunk')} {v.damagedChunks.length === 1 ? 'breaks' : 'break'} <strong data-testid="damaged-documents">{v.damagedDocuments.length}</strong> {plural(v.damagedDocuments.length, 'document')}:
              </p>
              <ul class="small">
                {v.damagedDocuments.map((d) => (
                  <li key={d.digest}>
                    <strong>{d.path ?? 'a document without a path'}</strong> <code class="wrap muted">{d.digest}</code>
                  </li>
                ))}
              </ul>
            </>
          ) : null}
          {/* The rest of what verify found (only chunks and documents were shown: a damaged log said "damage found" and nothing more — a trial). */}
          {otherDamage(v).length ? (
            <ul class="small" data-testid="damaged-other">
              {otherDamage(v).map((d, i) => (
                <li key={i}>
                  <strong>{d.what}</strong>: {d.message}
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
