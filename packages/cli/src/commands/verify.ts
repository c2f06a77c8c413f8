/**
 * `kura verify [--read-data | --no-read-data] [--json]`: re-reads and re-hashes every chunk and
 * document (on object storage only with --read-data; without, the packs' presence, sizes and
 * indexes are checked against the catalog, as restic's `check` does). Exit 0 when clean,
 * 3 when anything is damaged. The report lists each damaged chunk with the documents it
 * breaks; --json prints the VerifyReport as one line. Progress on stderr when it is a terminal.
 */
import type { Store, VerifyReport } from '@kura/store';
import type { Command } from 'commander';
import { EXIT, isKuraError } from '../exit.js';
import { bytes, count, shownPath } from '../format.js';
import { write, writeJson } from '../output.js';
import { Progress } from '../progress.js';
import { withStore } from '../store.js';

async function describeDoc(store: Store, digest: string, inSnapshots: ReadonlyMap<string, string>): Promise<string> {
  const path = await store.stat(digest).then(
    (i) => i.path,
    () => null,
  );
  if (path) return `${digest}  ${shownPath(path)}`;
  const held = inSnapshots.get(digest);
  return held ? `${digest}  ${held}` : digest;
}

/** Snapshots walked at most to name a damaged document no path shows (the newest first). */
const SNAPSHOTS_WALKED = 20;

/**
 * Where the newest snapshots hold documents no path shows: `<path> (snapshot <id>)` by digest.
 * A document only snapshots kept was named by its digest alone, and only a restore told which
 * file it was (a backup trial).
 */
async function snapshotPaths(store: Store, digests: ReadonlySet<string>): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const unnamed = new Set<string>();
  for (const d of digests) if (!(await store.stat(d).then((i) => i.path, () => null))) unnamed.add(d);
  if (unnamed.size === 0) return out;
  const snapshots = (await store.snapshots()).reverse().slice(0, SNAPSHOTS_WALKED);
  for (const s of snapshots) {
    for await (const w of store.snapshotEntries(s.id)) {
      if (w.entry.type !== 'file' || !unnamed.has(w.entry.digest) || out.has(w.entry.digest)) continue;
      out.set(w.entry.digest, `${shownPath(w.path)} (snapshot ${s.id.slice(0, 12)})`);
      if (out.size === unnamed.size) return out;
    }
  }
  return out;
}

/** Whether opening for writing failed for want of write access (then verify opens read-only). */
function cannotWrite(e: unknown): boolean {
  const code = (e as { code?: unknown; cause?: { code?: unknown } })?.code;
  const cause = (e as { cause?: { code?: unknown } })?.cause?.code;
  if ([code, cause].some((c) => typeof c === 'string' && (['READ_ONLY', 'EACCES', 'EPERM', 'EROFS', 'STORAGE_UNAVAILABLE'].includes(c) || c.startsWith('SQLITE_READONLY') || c === 'SQLITE_CANTOPEN'))) return true;
  // (The CLI's own error for a file-system failure keeps its code in its text only.)
  return e instanceof Error && /\[(EACCES|EPERM|EROFS)\]|SQLITE_READONLY|readonly database/.test(e.message);
}

const plural = (n: number, word: string) => `${count(n)} ${word}${n === 1 ? '' : 's'}`;

async function report(store: Store, r: VerifyReport, writable: boolean): Promise<string> {
  const lines: string[] = [];
  const inSnapshots = await snapshotPaths(store, new Set([...r.damagedChunks.flatMap((c) => c.documents), ...r.damagedDocuments.map((d) => d.digest)]));
  for (const c of r.damagedChunks) {
    lines.push(`damaged chunk ${c.key}: ${c.reason}: ${c.message}`);
    for (const d of c.documents) lines.push(`  breaks ${await describeDoc(store, d, inSnapshots)}`);
  }
  const viaChunks = new Set(r.damagedChunks.flatMap((c) => c.documents));
  for (const d of r.damagedDocuments) {
    if (!viaChunks.has(d.digest)) lines.push(`damaged document ${await describeDoc(store, d.digest, inSnapshots)}: ${d.reason}: ${d.message}`);
  }
  for (const t of r.damagedTrees) lines.push(`damaged snapshot tree ${t.digest}: ${t.reason}: ${t.message}`);
  for (const p of r.damagedPacks) lines.push(`damaged pack ${p.pack}: ${p.reason}: ${p.message}`);
  for (const l of r.damagedLog) lines.push(`damaged log${l.seq !== undefined ? ` at commit ${l.seq}` : ''}: ${l.reason}: ${l.message}`);
  for (const c of r.damagedCatalog) lines.push(`damaged database: ${c.message}`); // (a table's message names it)
  for (const k of r.damagedKeys) lines.push(`damaged key file keys/${k.id}: ${k.message} (its password no longer opens the store: restore it from a copy, or kura key remove it)`);
  for (const i of r.damagedSearchIndex) {
    lines.push(`damaged search index: ${i.message} (${i.remade ? 'emptied, every entry queued: it is indexed again in the background, and searches wait for it' : 'derived: open the store for writing to make it again'})`);
  }
  const trees = r.treesChecked ? `, ${plural(r.treesChecked, 'snapshot tree')}` : '';
  const read = r.dataRead ? `, ${bytes(r.bytesChecked)}` : ' (placement only: --read-data re-hashes the data)';
  const checked = `${plural(r.chunksChecked, 'chunk')}, ${plural(r.documentsChecked, 'document')}${trees}${read} checked`;
  // The database against its log: said when it was compared (decision 0073 says when it is not).
  const catalog = r.catalogChecked ? `; the database's ${plural(r.catalogRowsChecked, 'row')} compared with the log` : '; the database was not compared with the log (the log is damaged, or does not hold its head)';
  const parts = [plural(r.damagedChunks.length, 'chunk'), plural(r.damagedDocuments.length, 'document')];
  if (r.damagedTrees.length) parts.push(plural(r.damagedTrees.length, 'snapshot tree'));
  if (r.damagedPacks.length) parts.push(plural(r.damagedPacks.length, 'pack'));
  if (r.damagedLog.length) parts.push('the log');
  if (r.damagedCatalog.length) parts.push('the database');
  if (r.damagedKeys.length) parts.push(plural(r.damagedKeys.length, 'key file'));
  if (r.damagedSearchIndex.length) parts.push('the search index');
  // How damaged chunks are repaired, where they were recorded (a store opened for writing).
  if (r.damagedChunks.length) {
    lines.push(
      writable
        ? 'to repair: put the same bytes again (kura add FILE, or kura copy from another store that holds them; on object storage from this machine, whose cache recorded the damage): each damaged chunk they hold is written anew'
        : 'the store could not be opened for writing, so the damaged chunks were not recorded: run kura verify where it can write, then put the same bytes again to repair them',
    );
  }
  lines.push(
    r.ok
      ? `ok: ${checked}${catalog}`
      : `DAMAGED: ${parts.slice(0, -1).join(', ')} and ${parts.at(-1)} damaged (${checked}${catalog})`,
  );
  return lines.map((l) => `${l}\n`).join('');
}

export function register(program: Command, setExit: (code: number) => void): void {
  program
    .command('verify')
    .description('check every chunk and document against its hash (exit 3 if anything is damaged)')
    .option('--read-data', 're-read and re-hash every chunk and document (the default for a store in a local directory, encrypted or not)')
    .option('--no-read-data', 'check packs and their indexes against the catalog without reading the data (the default on object storage)')
    .option('--json', 'the VerifyReport as one JSON line')
    .action(async (opts: { json?: boolean; readData?: boolean }, cmd: Command) => {
      // Damage found while opening (a log commit that fails its check, a sealed configuration
      // changed) is damage too: said as verify says it, exit 3, not a failed open (exit 1).
      let open = false;
      // Opened for writing where it can be: verify then records the damaged chunks, so that a
      // put of the same bytes writes them anew (FORMAT.md §7). Read-only, re-adding the
      // original file only deduplicated against the broken chunk (a trial). A store that cannot
      // be written (read-only media, permissions) is verified read-only.
      const check = async (store: Store, writable: boolean) => {
        open = true;
        let phase = 'chunks';
        const bar = new Progress(0, !opts.json, ({ value, total }) => `verifying ${phase} ${count(value)}/${count(total)}`);
        let r: VerifyReport;
        try {
          r = await store.verify(
            (p) => {
              if (p.phase !== phase) phase = p.phase;
              bar.setTotal(p.total);
              bar.set(p.done);
            },
            opts.readData === undefined ? {} : { readData: opts.readData },
          );
        } finally {
          bar.stop();
        }
        if (opts.json) await writeJson(r);
        else await write(await report(store, r, writable));
        if (!r.ok) setExit(EXIT.damaged);
      };
      const opened = withStore(cmd, { readonly: false }, (store) => check(store, true)).catch((e: unknown) =>
        !open && cannotWrite(e) ? withStore(cmd, { readonly: true }, (store) => check(store, false)) : Promise.reject(e),
      );
      try {
        await opened;
      } catch (e) {
        if (!isKuraError(e, 'CORRUPT_DATA')) throw e;
        const what = open ? 'verify stopped' : 'the store could not be opened';
        if (opts.json) await writeJson({ ok: false, opened: open, damaged: { code: e.code, reason: (e as { reason?: string }).reason ?? null, message: e.message } });
        else process.stderr.write(`kura: damaged: ${what}: ${e.message} [CORRUPT_DATA]\n`);
        setExit(EXIT.damaged);
      }
    });
}
