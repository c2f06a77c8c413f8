/**
 * `kura gc [--no-policies] [--json]`: applies the retention policies kept in the store (kura
 * policy), then reclaims the space of removed documents; --json prints the GcReport with
 * `forgotten` (snapshots and versions the policies removed). Progress on stderr when it is a
 * terminal: chunk rows removed, then packs deleted or compacted.
 */
import { removedCounts, type GcProgress, type GcReport } from '@kura/store';
import type { Command } from 'commander';
import { bytes, count } from '../format.js';
import { Progress } from '../progress.js';
import { write, writeJson } from '../output.js';
import { withStore } from '../store.js';

function summary(r: GcReport): string {
  const plural = (n: number, word: string) => `${count(n)} ${word}${n === 1 ? '' : 's'}`;
  return (
    `freed ${bytes(r.bytesFreed)}: ${plural(r.chunksRemoved, 'chunk')} removed, ${plural(r.packsDeleted, 'pack')} deleted, ` +
    `${plural(r.packsCompacted, 'pack')} compacted, ${plural(r.orphansDeleted, 'orphan file')} deleted\n` +
    // Documents nothing held: left by a snapshot stopped before its commit.
    (r.documentsRemoved ? `${plural(r.documentsRemoved, 'document')} nothing held (left by a snapshot that was stopped) removed\n` : '') +
    // On an object store, packs a GC dropped are deleted by one that runs a margin later (decision 0041).
    (r.packsWaiting ? `${plural(r.packsWaiting, 'dropped pack')} (${bytes(r.bytesWaiting)}) to be deleted by a GC after the margin\n` : '') +
    // Small packs carried in their commits' log objects go with those objects (decisions 0044, 0045).
    (r.bytesInLog ? `${bytes(r.bytesInLog)} of small packs no longer used stay in the log's commit objects until the log is truncated (a GC deletes commits KURA_LOG_RETENTION_MS, 7 days by default, after a checkpoint covers them)\n` : '') +
    // Unused chunks kept for the margin: why, and from when a GC removes them.
    (r.chunksWaiting
      ? `${plural(r.chunksWaiting, 'unused chunk')} (${bytes(r.chunkBytesWaiting)}) wait${r.chunksWaiting === 1 ? 's' : ''} for the safety margin (${r.margin === 'writers' ? 'other processes have this store open for writing, such as kura watch or kura serve' : 'the store is shared through its log: object storage, or encrypted'}): run kura gc again after ${r.waitingUntil}\n`
      : '') +
    // Damage a compaction met: its packs stay until it is repaired (it was "compacted" forever, naming nothing).
    (r.chunksDamaged.length
      ? `${plural(r.chunksDamaged.length, 'damaged chunk')} kept ${r.chunksDamaged.length === 1 ? 'its pack' : 'their packs'} from being compacted (${r.chunksDamaged.slice(0, 3).join(', ')}${r.chunksDamaged.length > 3 ? ', …' : ''}): kura verify names the documents; put the same bytes again to repair them\n`
      : '') +
    // And the log's commits a checkpoint has covered for the retention (decision 0045).
    (r.logCommitsDeleted || r.checkpointsDeleted ? `log truncated: ${plural(r.logCommitsDeleted, 'commit')} and ${plural(r.checkpointsDeleted, 'checkpoint')} deleted\n` : '')
  );
}

export function register(program: Command): void {
  program
    .command('gc')
    .description('reclaim the space of chunks no document uses any more')
    .option('--no-policies', 'leave the retention policies (kura policy) for later')
    .option('--json', 'one JSON line: {"forgotten":{"snapshots","versions"},"documentsRemoved","chunksRemoved","packsDeleted","packsCompacted","orphansDeleted","bytesFreed","packsWaiting","bytesWaiting","bytesInLog","logCommitsDeleted","checkpointsDeleted","chunksWaiting","chunkBytesWaiting","waitingUntil"?,"margin"?,"chunksDamaged"}')
    .action(async (opts: { json?: boolean; policies: boolean }, cmd: Command) => {
      await withStore(cmd, { readonly: false }, async (store) => {
        // The policies first: what they remove is then reclaimed by this same run.
        const forgotten = removedCounts(opts.policies ? await store.applyPolicies() : []);
        let phase: GcProgress['phase'] = 'chunks';
        const bar = new Progress(0, !opts.json, ({ value, total }) =>
          phase === 'chunks' ? `removing unused chunks ${count(value)}/${count(total)}` : `deleting and compacting packs ${count(value)}/${count(total)}`,
        );
        let r: GcReport;
        try {
          r = await store.gc((p) => {
            phase = p.phase;
            bar.setTotal(p.total);
            bar.set(p.done);
          });
        } finally {
          bar.stop();
        }
        if (opts.json) await writeJson({ forgotten, ...r });
        else await write(`${forgotten.snapshots || forgotten.versions ? `policies removed ${count(forgotten.snapshots)} snapshots and ${count(forgotten.versions)} versions\n` : ''}${summary(r)}`);
      });
    });
}
