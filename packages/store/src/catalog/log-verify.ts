/**
 * The log checked against itself and the database (issue 21; restic `check` is the model):
 * every commit from the first one (the first after a truncation: decision 0045) intact, seqs without gaps, each `prev` the hash of the commit
 * before, and the commit the database says it applied last present with the same hash. Commits
 * after the database's head are not damage: a local writer that died between its append and
 * its COMMIT left them, another server made them (the next write or refresh applies them).
 */
import { CorruptDataError } from '@kura/core';
import type { Statements } from './statements.js';
import { commitsAfter, decodeCommit, emptyHead, readHead, type LogHead } from './commits.js';
import { decodeFrame, sameHash } from './frame.js';
import type { LogStore } from './log-store.js';
import { checkedCheckpoint } from './checkpoint.js';

export interface DamagedLog {
  /**
   * `log` (a frame that is not intact, a broken chain), `unauthentic` (an encrypted store's
   * commit whose sealed body fails authentication: changed with its plain hash made to fit) or
   * `log-behind` (the database's head is not in the log, or differs).
   */
  reason: 'log' | 'unauthentic' | 'log-behind' | 'checkpoint';
  seq?: number;
  message: string;
}

export async function verifyLog(st: Statements, store: LogStore): Promise<{ commitsChecked: number; damaged: DamagedLog[] }> {
  const damaged: DamagedLog[] = [];
  let commits: Awaited<ReturnType<typeof commitsAfter>>['commits'] = [];
  let last: Awaited<ReturnType<typeof commitsAfter>>['last'];
  let start = emptyHead();
  // The database's head first, then the log: every commit it has applied is in the log by then
  // (the append comes before the COMMIT). Read after the log, a writer committing in between
  // (another process) left a head past the commits read: "the log lost commits", wrongly.
  const head = readHead(st);
  // Checkpoints, each against its own hash (a damaged one was "ok", then blocked a rebuild: a
  // trial), an encrypted store's opened (authenticated) too. First: a damaged log ends the rest.
  for (const name of await store.checkpoints()) {
    try {
      checkedCheckpoint(await store.readCheckpoint(name), name);
    } catch (e) {
      if (!(e instanceof CorruptDataError)) throw e;
      damaged.push({ reason: e.reason === 'unauthentic' ? 'unauthentic' : 'checkpoint', seq: Number(name), message: `${e.message}; a rebuild uses an older checkpoint, or the log from its start` });
    }
  }
  try {
    start = await logStart(store);
    ({ commits, last } = await commitsAfter(store, start));
  } catch (e) {
    if (!(e instanceof CorruptDataError)) throw e;
    damaged.push({ reason: e.reason === 'unauthentic' ? 'unauthentic' : 'log', message: e.message });
    return { commitsChecked: 0, damaged };
  }
  // An encrypted store's commits are authenticated too (FORMAT.md §17.6): the chain's hashes are
  // plain SHA-256, which whoever changes a body can make fit; its seal they cannot.
  if (store.sealing) {
    for (const { frame } of commits) {
      try {
        decodeCommit(frame, store.sealing);
      } catch (e) {
        if (!(e instanceof CorruptDataError)) throw e;
        damaged.push({ reason: e.reason === 'unauthentic' ? 'unauthentic' : 'log', seq: frame.seq, message: e.message });
      }
    }
  }
  // (A head the truncation deleted is covered by the checkpoint the database was made from.)
  if (head && head.seq > start.seq) {
    const at = commits[head.seq - start.seq - 1];
    const held = start.seq + commits.length;
    if (!at && last && last.end < last.size) {
      // Readers stop at the first frame that is not intact: one the database has applied past.
      damaged.push({ reason: 'log', seq: held + 1, message: `commit ${held + 1} in log segment ${last.segment} is not intact (the database has applied up to commit ${head.seq}): the log is damaged` });
    } else if (!at || at.frame.seq !== head.seq) {
      damaged.push({ reason: 'log-behind', seq: head.seq, message: `the database has applied commit ${head.seq}, and the log holds commits up to ${held}: the log lost commits the database holds: restore the log from a copy of the store, or copy the store and run a forced rebuild (kura rebuild --force; in a browser, BrowserStore.rebuild(name, { force: true })) (those commits are then lost)` });
    } else if (!sameHash(at.frame.hash, head.hash)) {
      damaged.push({ reason: 'log-behind', seq: head.seq, message: `commit ${head.seq} in the log is not the one the database applied (its hash differs): rebuild the database from the log (kura rebuild)` });
    }
  }
  return { commitsChecked: commits.length, damaged };
}

/**
 * Where the log begins: before its first commit — seq 0, unless the log was truncated (decision
 * 0045): then its first commit is taken as it is (what came before it is gone), and a
 * checkpoint must cover the commits before it.
 */
async function logStart(store: LogStore): Promise<LogHead> {
  const [first] = await store.segments();
  if (first === undefined || Number(first) <= 1) return emptyHead();
  const frame = decodeFrame(await store.readSegment(first), 0);
  if (!frame) return emptyHead(); // (commitsAfter reports it)
  const covered = (await store.checkpoints()).some((n) => Number(n) >= frame.seq - 1);
  if (!covered) throw new CorruptDataError(`the log begins at commit ${frame.seq}, and no checkpoint covers the commits before it`, 'log');
  return { seq: frame.seq - 1, hash: frame.prev.slice(), segment: '', end: 0 };
}
