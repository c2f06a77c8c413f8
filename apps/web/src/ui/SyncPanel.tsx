/** Push to and pull from a Kura server (URL + token), with the bytes that crossed the wire. */
import { useState } from 'preact/hooks';
import type { Progress } from '../protocol.js';
import type { SyncReport, SyncTarget } from '../worker/sync.js';
import { ProgressBar } from './AddPanel.js';
import { bytes } from './format.js';

const SAVED = 'kura-sync-target';

export function SyncPanel(props: {
  busy: boolean;
  progress: Progress | undefined;
  report: { kind: 'push' | 'pull'; report: SyncReport } | undefined;
  onSync: (kind: 'push' | 'pull', target: SyncTarget) => void;
}) {
  const saved = JSON.parse(localStorage.getItem(SAVED) ?? 'null') as { url: string } | null;
  const [url, setUrl] = useState(saved?.url ?? location.origin);
  const [token, setToken] = useState('');
  const go = (kind: 'push' | 'pull') => {
    localStorage.setItem(SAVED, JSON.stringify({ url })); // never the token
    props.onSync(kind, { url, ...(token ? { token } : {}) });
  };
  const r = props.report?.report;
  return (
    <section aria-labelledby="sync-h" class="card">
      <h2 id="sync-h">Sync with a Kura server</h2>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          go('push');
        }}
      >
        <label class="inline grow">
          Server URL
          <input type="url" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} data-testid="sync-url" />
        </label>
        <label class="inline">
          Token
          <input type="password" autocomplete="off" value={token} onInput={(e) => setToken(e.currentTarget.value)} data-testid="sync-token" />
        </label>
        <button type="submit" disabled={props.busy}>
          Push
        </button>
        <button type="button" class="secondary" disabled={props.busy} onClick={() => go('pull')}>
          Pull
        </button>
      </form>
      <ProgressBar p={props.progress} label={props.progress?.task === 'pull' ? 'Pulling' : 'Pushing'} />
      {r ? (
        <div role="status" data-testid="sync-report" data-kind={props.report!.kind} data-bytes-sent={r.bytesSent} data-logical={r.logicalBytes} data-chunks-sent={r.chunksSent}>
          <p>
            {props.report!.kind === 'push' ? 'Pushed' : 'Pulled'} {r.documents} {r.documents === 1 ? 'document' : 'documents'} ({bytes(r.logicalBytes)}), {r.skipped} already there{r.updated ? `, ${r.updated} given their tags or metadata` : ''}, in {r.seconds.toFixed(1)} s.
          </p>
          {props.report!.kind === 'push' ? (
            <p>
              Sent <strong>{bytes(r.bytesSent)}</strong> of {bytes(r.logicalBytes)} logical ({r.chunksSent} chunks sent, {r.chunksSkipped} the server had).
            </p>
          ) : (
            <p>
              Received <strong>{bytes(r.bytesReceived)}</strong>.
            </p>
          )}
          {r.failed.length ? (
            <ul class="error-text small">
              {r.failed.map((f) => (
                <li key={f.digest}>
                  {f.digest}: {f.message}
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
