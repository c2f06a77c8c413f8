/** The document list: search (FTS5, BM25), tag filter, paging, and per-row actions. */
import type { DocumentInfo, SearchHit } from '@kura/store/browser';
import { useState } from 'preact/hooks';
import { DigestCode } from './DigestCode.js';
import { bytes, when } from './format.js';

export interface ListState {
  items: (DocumentInfo | SearchHit)[];
  nextCursor?: string;
  search: boolean;
}

/** Snippets come with <mark> around matched terms and everything else HTML-escaped by the store. */
function Snippet({ html }: { html: string }) {
  return <p class="snippet" dangerouslySetInnerHTML={{ __html: html }} />;
}

export function Documents(props: {
  list: ListState | undefined;
  tags: { tag: string; entries: number }[];
  query: { q: string; tag: string };
  busy: boolean;
  onQuery: (q: { q: string; tag: string }) => void;
  onMore: () => void;
  /** An entry's path, or the digest of one without a path. */
  onOpen: (ref: string) => void;
  onDownload: (digest: string) => void;
  onDelete: (ref: string) => void;
}) {
  const [q, setQ] = useState(props.query.q);
  return (
    <section aria-labelledby="docs-h" class="card">
      <h2 id="docs-h">Documents</h2>
      <form
        class="row"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          props.onQuery({ ...props.query, q });
        }}
      >
        <label class="inline grow">
          Search
          <input type="search" name="q" placeholder="words in names, tags, metadata or text" value={q} onInput={(e) => setQ(e.currentTarget.value)} data-testid="search-input" />
        </label>
        <label class="inline">
          Tag
          <select value={props.query.tag} onChange={(e) => props.onQuery({ ...props.query, q, tag: e.currentTarget.value })} data-testid="tag-filter">
            <option value="">All tags</option>
            {props.tags.map((t) => (
              <option key={t.tag} value={t.tag}>
                {t.tag} ({t.entries})
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Search</button>
        {props.query.q ? (
          <button
            type="button"
            class="secondary"
            onClick={() => {
              setQ('');
              props.onQuery({ ...props.query, q: '' });
            }}
          >
            Clear
          </button>
        ) : null}
      </form>
      {!props.list ? (
        <p class="muted">Loading…</p>
      ) : props.list.items.length === 0 ? (
        <p class="muted" data-testid="empty">
          {props.list.search ? 'Nothing matches.' : 'No documents yet: add some files above.'}
        </p>
      ) : (
        <ul class="docs" data-testid="doc-list">
          {props.list.items.map((d) => (
            <li key={d.path ?? d.digest} data-testid="doc" data-digest={d.digest}>
              <div class="doc-main">
                <button class="link" onClick={() => props.onOpen(d.path ?? d.digest)} title="Details">
                  {d.path ?? 'without a path'}
                </button>
                <DigestCode digest={d.digest} />
                <span class="muted small">
                  {bytes(d.size)}
                  {d.mediaType ? ` · ${d.mediaType}` : ''}
                  {'tags' in d && d.tags.length ? ` · ${d.tags.join(', ')}` : ''}
                  {'createdAt' in d ? ` · ${when(d.createdAt)}` : ''}
                </span>
                {'snippet' in d && d.snippet ? <Snippet html={d.snippet} /> : null}
              </div>
              <div class="doc-actions">
                <button class="secondary" onClick={() => props.onDownload(d.digest)} aria-label={`Download ${d.path ?? d.digest}`} disabled={props.busy}>
                  Download
                </button>
                <button class="danger" onClick={() => props.onDelete(d.path ?? d.digest)} aria-label={`Delete ${d.path ?? d.digest}`} disabled={props.busy}>
                  Delete
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
      {props.list?.nextCursor ? (
        <button class="secondary" onClick={props.onMore}>
          Show more
        </button>
      ) : null}
    </section>
  );
}
