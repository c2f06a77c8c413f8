/** Snapshots of folders: pick one to snapshot it whole; the store's snapshots, newest first. */
import type { SnapshotInfo } from '@kura/store/browser';
import type { Progress } from '../protocol.js';
import { ProgressBar } from './AddPanel.js';
import { fromInput } from './files.js';
import type { FileToAdd } from '../worker/store.worker.js';
import { bytes } from './format.js';

export function Snapshots(props: { busy: boolean; snapshots: SnapshotInfo[]; progress: Progress | undefined; onSnapshot: (files: FileToAdd[]) => void }) {
  const picked = (e: Event) => {
    const input = e.currentTarget as HTMLInputElement;
    if (input.files?.length) props.onSnapshot(fromInput(input.files));
    input.value = '';
  };
  return (
    <section aria-labelledby="snap-h" class="card">
      <h2 id="snap-h">Snapshots</h2>
      <p class="muted small">A folder as it is now, whole: its files are deduplicated against everything stored, so a snapshot of a folder that changed a little costs only the change.</p>
      <label class="button secondary">
        Snapshot a folder
        <input type="file" multiple {...{ webkitdirectory: true }} data-testid="snapshot-input" disabled={props.busy} onChange={picked} />
      </label>
      <ProgressBar p={props.progress} label="Snapshotting" />
      <ul class="small">
        {[...props.snapshots].reverse().map((s) => (
          <li key={s.id} data-testid="snapshot" data-label={s.label ?? ''}>
            <strong>{s.label ?? 'unlabelled'}</strong> <code class="muted">{s.id.slice(0, 12)}</code> — {s.files} files, {bytes(s.bytes)},{' '}
            <time dateTime={s.createdAt}>{new Date(s.createdAt).toLocaleString()}</time>
          </li>
        ))}
      </ul>
    </section>
  );
}
