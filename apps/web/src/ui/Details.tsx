/** A document's details in a modal dialog: digest, type, tags (editable), metadata, versions. */
import type { DocumentInfo, VersionInfo } from '@kura/store/browser';
import { useEffect, useRef, useState } from 'preact/hooks';
import { DigestCode } from './DigestCode.js';
import { bytes, when } from './format.js';

export interface DetailsData {
  info: DocumentInfo;
  versions: VersionInfo[];
  exclusiveSize: number;
  /** An older version of the path (`info` as that version shows it): its tags are the path's, changed on its latest. */
  older?: boolean;
}

export function Details(props: {
  data: DetailsData;
  onClose: () => void;
  onDownload: (digest: string, name?: string) => void;
  /** Opens an entry by path or digest, or a version of a path. */
  onOpen: (ref: string | { path: string; version: number }) => void;
  /** Changes the tags of the entry named by its path (or digest, without one). */
  onTags: (ref: string, add: string[], remove: string[]) => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const [tag, setTag] = useState('');
  const { info, versions, older } = props.data;
  useEffect(() => {
    if (!ref.current?.open) ref.current?.showModal();
  }, []);
  return (
    <dialog ref={ref} class="details" aria-labelledby="details-h" onClose={props.onClose} data-testid="details">
      <h2 id="details-h" class="truncate">
        {info.path ?? 'Document'}
        {older ? ` (version ${info.version})` : ''}
      </h2>
      <dl class="kv">
        <dt>Digest</dt>
        <dd>
          <code class="wrap">{info.digest}</code>
        </dd>
        <dt>Size</dt>
        <dd>
          {bytes(info.size)} in {info.chunks} {info.chunks === 1 ? 'chunk' : 'chunks'}; deleting it frees {bytes(props.data.exclusiveSize)}
        </dd>
        <dt>Media type</dt>
        <dd>{info.mediaType ?? '—'}</dd>
        <dt>{info.version && info.version > 1 ? 'Changed' : 'Added'}</dt>
        <dd>{when(info.updatedAt)}</dd>
        <dt>Tags</dt>
        <dd>
          <ul class="chips">
            {info.tags.map((t) => (
              <li key={t}>
                {t}
                {older ? null : (
                  <button class="chip-x" aria-label={`Remove tag ${t}`} onClick={() => props.onTags(info.path ?? info.digest, [], [t])}>
                    ×
                  </button>
                )}
              </li>
            ))}
          </ul>
          {older ? (
            <p class="muted small">Tags belong to the path, with every version: open its latest version to change them.</p>
          ) : (
          <form
            class="row"
            onSubmit={(e) => {
              e.preventDefault();
              if (tag.trim()) props.onTags(info.path ?? info.digest, [tag.trim()], []);
              setTag('');
            }}
          >
            <label class="inline">
              New tag
              <input type="text" value={tag} onInput={(e) => setTag(e.currentTarget.value)} />
            </label>
            <button type="submit" class="secondary">
              Add tag
            </button>
          </form>
          )}
        </dd>
        {Object.keys(info.meta).length ? (
          <>
            <dt>Metadata</dt>
            <dd>
              <dl class="kv inner">
                {Object.entries(info.meta).map(([k, v]) => (
                  <>
                    <dt key={`k-${k}`}>{k}</dt>
                    <dd key={`v-${k}`}>{v}</dd>
                  </>
                ))}
              </dl>
            </dd>
          </>
        ) : null}
      </dl>
      {versions.length ? (
        <>
          <h3>Versions of {info.path}</h3>
          <table class="versions">
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">Added</th>
                <th scope="col">Size</th>
                <th scope="col">Digest</th>
              </tr>
            </thead>
            <tbody>
              {versions.map((v) => (
                <tr key={v.version} aria-current={v.version === info.version ? 'true' : undefined}>
                  <td>{v.version}</td>
                  <td>{when(v.createdAt)}</td>
                  <td>{bytes(v.size)}</td>
                  <td>
                    <DigestCode digest={v.digest} />
                    {v.version === info.version ? null : (
                      <button class="link small" onClick={() => props.onOpen(v.version === versions.at(-1)?.version ? info.path! : { path: info.path!, version: v.version })} aria-label={`Open version ${v.version}`}>
                        open
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}
      <div class="row end">
        <button onClick={() => props.onDownload(info.digest, info.path ?? undefined)}>Download</button>
        <button class="secondary" onClick={() => ref.current?.close()}>
          Close
        </button>
      </div>
    </dialog>
  );
}
