/**
 * The document list: search (keyword: FTS5, BM25; by meaning: the local model; hybrid: both),
 * what background indexing has left, tag filter, paging, and per-row actions.
 */
import type { DocumentInfo, SearchHit } from '@kura/store/browser';
import { useState } from 'preact/hooks';
import type { SearchMode, Semantic } from '../protocol.js';
import { DigestCode } from './DigestCode.js';
import { bytes, when } from './format.js';

export interface Query {
  q: string;
  tag: string;
  mode: SearchMode;
}

export interface Indexing {
  semantic: Semantic;
  queued: number;
  embedding: { documents: number; chunks: number; pending: number } | null;
}

const MODES: { mode: SearchMode; label: string }[] = [
  { mode: 'hybrid', label: 'Words and meaning' },
  { mode: 'semantic', label: 'Meaning only' },
  { mode: 'keyword', label: 'Words only' },
];

/** One line on what indexing has left and whether search by meaning is there. */
function IndexingLine({ indexing }: { indexing: Indexing | undefined }) {
  if (!indexing) return null;
  const { semantic, queued, embedding } = indexing;
  const parts: string[] = [];
  if (queued > 0) parts.push(`${queued} change${queued === 1 ? '' : 's'} to index`);
  if (semantic.state === 'loading') parts.push('loading the model for search by meaning…');
  else if (semantic.state === 'unavailable') parts.push(`search by meaning is unavailable (${semantic.reason})`);
  else if (embedding) {
    const total = embedding.documents + embedding.pending;
    if (embedding.pending > 0) parts.push(`understanding documents: ${embedding.documents} of ${total}`);
    else parts.push(total === 0 ? 'search by meaning is ready' : `all ${total} document${total === 1 ? '' : 's'} searchable by meaning`);
  }
  const pending = embedding && embedding.pending > 0 && semantic.state === 'ready' ? embedding : undefined;
  return (
    <div class="indexing" data-testid="indexing" data-state={semantic.state} data-pending={String((embedding?.pending ?? 0) + queued)}>
      <p class="muted small">{parts.join(' · ')}</p>
      {pending ? (
        <div class="bar" role="progressbar" aria-valuemin={0} aria-valuemax={pending.documents + pending.pending} aria-valuenow={pending.documents} aria-label="Documents understood">
          <div class="fill" style={{ width: `${(100 * pending.documents) / (pending.documents + pending.pending)}%` }} />
        </div>
      ) : null}
    </div>
  );
}

export interface ListState {
  items: (DocumentInfo | SearchHit)[];
  nextCursor?: string;
  search: boolean;
  /** A search by meaning answered before these documents were embedded: it could not see them. */
  notEmbedded?: number;
  /** Operator syntax the search read as plain words (the query language: docs/HTTP.md). */
  fallbacks?: string[];
  /** A search with no words in it (only filters): nothing to rank by. */
  wordless?: boolean;
}

/** Snippets come with <mark> around matched terms and everything else HTML-escaped by the store. */
function Snippet({ html }: { html: string }) {
  return <p class="snippet" dangerouslySetInnerHTML={{ __html: html }} />;
}

export function Documents(props: {
  list: ListState | undefined;
  tags: { tag: string; entries: number }[];
  query: Query;
  indexing: Indexing | undefined;
  busy: boolean;
  onQuery: (q: Query) => void;
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
          <input type="search" name="q" placeholder="words, or a question in your own words" value={q} onInput={(e) => setQ(e.currentTarget.value)} data-testid="search-input" />
        </label>
        <label class="inline">
          Match
          <select value={props.query.mode} onChange={(e) => props.onQuery({ ...props.query, q, mode: e.currentTarget.value as SearchMode })} data-testid="search-mode">
            {MODES.map(({ mode, label }) => (
              <option key={mode} value={mode} disabled={mode !== 'keyword' && props.indexing?.semantic.state === 'unavailable'}>
                {label}
              </option>
            ))}
          </select>
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
      <IndexingLine indexing={props.indexing} />
      {props.list?.search && props.list.fallbacks ? (
        <p class="muted small" data-testid="search-fallbacks">
          Searched as plain words: {props.list.fallbacks.join('; ')}.
        </p>
      ) : null}
      {props.list?.search && props.list.notEmbedded ? (
        <p class="muted small" data-testid="not-embedded">
          {props.list.notEmbedded} document{props.list.notEmbedded === 1 ? ' is' : 's are'} still being understood: the search by meaning could not see{' '}
          {props.list.notEmbedded === 1 ? 'it' : 'them'} yet (the search by words did).
        </p>
      ) : null}
      {!props.list ? (
        <p class="muted">Loading…</p>
      ) : props.list.items.length === 0 ? (
        <p class="muted" data-testid="empty">
          {props.list.wordless
            ? 'No words to search for: search ranks documents by words (type:, tag: and path: only narrow a search). To see every document of a tag, pick it from the tags.'
            : props.list.search
              ? 'Nothing matches.'
              : 'No documents yet: add some files above.'}
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
                  {'updatedAt' in d ? ` · ${when(d.updatedAt)}` : ''}
                </span>
                {'snippet' in d && d.snippet ? <Snippet html={d.snippet} /> : null}
                {'score' in d && (d.keyword || d.semantic || d.exact) ? (
                  <span class="muted small" data-testid="matched-by">
                    matched by {d.keyword && d.semantic ? 'words and meaning' : d.semantic ? 'meaning' : 'words'}
                    {d.exact ? ', the name asked for as written' : ''}
                  </span>
                ) : null}
                {'alsoAt' in d && d.alsoAt?.length ? (
                  // One hit per document (decision 0072): the same bytes at other paths, named.
                  <span class="muted small" data-testid="also-at">
                    also at {d.alsoAt.join(', ')}
                    {d.alsoAtMore ? ` and ${d.alsoAtMore} more` : ''}
                  </span>
                ) : null}
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
