/** Adding files: drop zone, pickers, tags, progress bar with MB/s, and per-file results. */
import { useState } from 'preact/hooks';
import type { Added, Progress } from '../protocol.js';
import type { FileToAdd } from '../worker/store.worker.js';
import { ChunkMap } from './ChunkMap.js';
import { fromDrop, fromInput } from './files.js';
import { DigestCode } from './DigestCode.js';
import { bytes, rate } from './format.js';

export function ProgressBar({ p, label }: { p: Progress | undefined; label: string }) {
  if (!p) return null;
  const pct = p.total > 0 ? Math.min(100, (100 * p.done) / p.total) : 100;
  const isBytes = p.task !== 'verify';
  return (
    <div class="progress" data-testid={`progress-${p.task}`}>
      <div class="progress-label">
        <span>{label}</span>
        <span>
          {isBytes ? `${bytes(p.done)} of ${bytes(p.total)} · ${rate(p.rate)}` : `${p.done} of ${p.total} ${p.current ?? ''}`}
        </span>
      </div>
      <div role="progressbar" aria-label={label} aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(pct)} class="bar">
        <div class="fill" style={{ width: `${pct}%` }} />
      </div>
      {p.current && isBytes ? <div class="muted small truncate">{p.current}</div> : null}
    </div>
  );
}

export function AddPanel(props: { busy: boolean; progress: Progress | undefined; added: Added[]; onAdd: (files: FileToAdd[], tags: string[]) => void }) {
  const [over, setOver] = useState(false);
  const [tags, setTags] = useState('');
  const tagList = () =>
    tags
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean);
  const add = (files: FileToAdd[]) => files.length && props.onAdd(files, tagList());
  /** A picker's files; the input is cleared so picking the same file again adds it again. */
  const picked = (e: Event) => {
    const input = e.currentTarget as HTMLInputElement;
    if (input.files) add(fromInput(input.files));
    input.value = '';
  };
  return (
    <section aria-labelledby="add-h" class="card">
      <h2 id="add-h">Add files</h2>
      <div
        class={`drop ${over ? 'over' : ''}`}
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={async (e) => {
          e.preventDefault();
          setOver(false);
          if (e.dataTransfer) add(await fromDrop(e.dataTransfer));
        }}
      >
        <p>Drop files or a folder here. They are chunked, deduplicated and compressed in this tab, and kept in your browser's private storage.</p>
        <div class="row">
          <label class="button">
            Choose files
            <input
              type="file"
              multiple
              data-testid="file-input"
              disabled={props.busy}
              onChange={picked}
            />
          </label>
          <label class="button secondary">
            Choose a folder
            <input
              type="file"
              multiple
              {...{ webkitdirectory: true }}
              disabled={props.busy}
              onChange={picked}
            />
          </label>
          <label class="inline">
            Tags for new files
            <input type="text" placeholder="e.g. notes, 2026" value={tags} onInput={(e) => setTags(e.currentTarget.value)} />
          </label>
        </div>
      </div>
      <ProgressBar p={props.progress} label="Adding" />
      {props.added.length ? (
        <ol class="added" aria-label="Files added" data-testid="added-list">
          {props.added.map((a, i) => (
            <li key={`${a.path}-${i}`} data-testid="added" data-path={a.path} data-new-bytes={a.newBytes ?? ''} data-digest={a.digest ?? ''}>
              <div class="added-head">
                <strong class="truncate">{a.path}</strong>
                {a.error ? (
                  <span class="error-text">{a.error.message}</span>
                ) : (
                  <span class="muted">
                    {bytes(a.size)} · {a.chunks} {a.chunks === 1 ? "chunk" : "chunks"} · <span data-testid="new-bytes">{bytes(a.newBytes!)}</span> new
                  </span>
                )}
              </div>
              {a.cells ? <ChunkMap cells={a.cells} chunks={a.chunks!} newChunks={a.newChunks!} /> : null}
              {a.digest ? <DigestCode digest={a.digest} /> : null}
            </li>
          ))}
        </ol>
      ) : null}
    </section>
  );
}
