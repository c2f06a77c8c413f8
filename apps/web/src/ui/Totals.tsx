/** The store's totals, as StoreStats reports them. */
import type { StoreStats } from '@kura/store/browser';
import { bytes, ratio } from './format.js';

export function Totals({ stats, storage }: { stats: StoreStats | undefined; storage: { usage: number; quota: number; persisted: boolean } | undefined }) {
  const items: [string, string, string][] = stats
    ? [
        ['entries', 'Files', String(stats.entries)],
        ['documents', 'Distinct documents', String(stats.documents)],
        ['logical', 'Logical bytes', bytes(stats.logicalBytes)],
        ['stored', 'Stored bytes', bytes(stats.storedBytes)],
        ['dedup', 'Dedup ratio', ratio(stats.dedupRatio)],
        ['compression', 'Compression ratio', ratio(stats.compressionRatio)],
      ]
    : [];
  return (
    <section aria-labelledby="totals-h" class="card">
      <h2 id="totals-h">Totals</h2>
      <dl class="totals">
        {items.map(([id, label, value]) => (
          <div key={id}>
            <dt>{label}</dt>
            <dd data-testid={`stat-${id}`}>{value}</dd>
          </div>
        ))}
      </dl>
      {storage ? (
        <p class="muted small">
          Browser storage: {bytes(storage.usage)} used of {bytes(storage.quota)} available
          {storage.persisted ? ' · persistent' : ' · may be evicted under storage pressure'}
        </p>
      ) : null}
    </section>
  );
}
