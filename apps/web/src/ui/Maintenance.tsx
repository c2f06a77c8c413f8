/** GC and verify, with their reports; erasing the whole store. */
import type { DamagedDocument, GcReport, VerifyReport } from '@kura/store/browser';
import type { Progress } from '../protocol.js';
import { ProgressBar } from './AddPanel.js';
import { bytes } from './format.js';

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
            Verify: {v.ok ? 'everything is intact' : 'damage found'} — {v.chunksChecked} chunks, {v.documentsChecked} documents, {v.treesChecked} trees, {bytes(v.bytesChecked)} re-hashed.
          </p>
          {v.damagedChunks.length ? (
            <>
              <p>
                <strong data-testid="damaged-chunks">{v.damagedChunks.length}</strong> damaged chunks break <strong data-testid="damaged-documents">{v.damagedDocuments.length}</strong> documents:
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
        </div>
      ) : null}
    </section>
  );
}
