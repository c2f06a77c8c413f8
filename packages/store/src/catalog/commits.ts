/**
 * Commits as data (FORMAT.md §15.2–15.4): a commit's body as JSON and back, the head the
 * database has applied (`log_state`), and the commits a log holds after a head, with the
 * hash chain checked. The CommitLog (commit-log.ts) writes them; replay reads them.
 */
import { CorruptDataError } from '@kura/core';
import { bytesToHex, randomHex } from '../hex.js';
import type { Statements } from './statements.js';
import { ZERO_HASH, parseSegmentName, readFrames, sameHash, tailDamage, type Frame } from './frame.js';
import type { LogStore } from './log-store.js';
import type { Op } from './ops.js';
import type { Sealing } from '../encryption/sealing.js';

/** What the database has applied: the last commit's seq and hash, and where the log goes on. */
export interface LogHead {
  seq: number;
  hash: Uint8Array;
  /** The segment holding that commit ('' before the first), and the offset after it. */
  segment: string;
  end: number;
}

/** One commit as read back: its seq, writer, time and operations. */
export interface Commit {
  seq: number;
  hash: Uint8Array;
  writer: string;
  time: number;
  ops: Op[];
  /** How many operations each job has, in order, when its writer left the jobs to the replay (commit-jobs.ts). */
  jobs?: number[];
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/** A commit's body: the JSON FORMAT.md §15.2 describes (encodeFrame makes it UTF-8); `jobs`: see commit-jobs.ts. */
export function encodeBody(writer: string, time: number, ops: readonly Op[], jobs?: readonly number[]): string {
  return JSON.stringify(jobs ? { w: writer, t: time, ops, jobs } : { w: writer, t: time, ops });
}

/**
 * A frame's commit. `sealing`: the store is encrypted (FORMAT.md §17.6), its frames' bodies
 * sealed; a frame of the other kind than its store is damage, never read as a commit.
 */
export function decodeCommit(f: Frame, sealing: Sealing | undefined): Commit {
  if (f.sealed !== (sealing !== undefined)) {
    throw new CorruptDataError(`commit ${f.seq} is ${f.sealed ? 'sealed, in a store that is not encrypted' : 'not sealed, in an encrypted store'}`, f.sealed ? 'log' : 'unauthentic');
  }
  let body: { w?: unknown; t?: unknown; ops?: unknown; jobs?: unknown };
  const plain = sealing ? sealing.openBody(f.seq, f.prev, f.body) : f.body;
  try {
    body = JSON.parse(decoder.decode(plain)) as typeof body;
  } catch (e) {
    throw new CorruptDataError(`commit ${f.seq}'s body is not JSON: ${(e as Error).message}`, 'log');
  }
  if (typeof body.w !== 'string' || typeof body.t !== 'number' || !Array.isArray(body.ops)) {
    throw new CorruptDataError(`commit ${f.seq} is not a Kura commit (writer, time, ops)`, 'log');
  }
  const c: Commit = { seq: f.seq, hash: f.hash.slice(), writer: body.w, time: body.t, ops: body.ops as Op[] };
  if (body.jobs !== undefined) {
    const jobs = body.jobs;
    if (!Array.isArray(jobs) || !jobs.every((n) => Number.isSafeInteger(n) && n >= 0) || jobs.reduce((a: number, n: number) => a + n, 0) !== c.ops.length) {
      throw new CorruptDataError(`commit ${f.seq}'s jobs do not divide its ${c.ops.length} operations`, 'log');
    }
    c.jobs = jobs as number[];
  }
  return c;
}

export function readHead(st: Statements): LogHead | undefined {
  const row = st.logHeadGet.get();
  return row ? { seq: row.seq, hash: row.hash, segment: row.segment, end: row.seg_end } : undefined;
}

export function writeHead(st: Statements, h: LogHead): void {
  st.logHeadSet.run(h.seq, h.hash, h.segment, h.end);
}

/**
 * The commits after `head`, in order, from the segments `store` holds; the chain is checked
 * (seq by seq, each `prev` the hash of the one before). `tail`: where the last intact frame of
 * the newest segment ends, and whether bytes follow it (an append a crash tore).
 */
export async function commitsAfter(
  store: LogStore,
  head: Pick<LogHead, 'seq' | 'hash' | 'segment' | 'end'>,
  /**
   * Stop at the first commit that does not follow on, instead of failing: a log on object
   * storage being written to (an object not yet whole or listed); the caller's catch-up goes on
   * from there, patiently (object-commits.ts).
   */
  stopAtGap = false,
): Promise<{
  commits: LoggedFrame[];
  last: { segment: string; end: number; size: number } | undefined;
  /** Where the head's own commit is, when it was read (a head from a checkpoint names no segment). */
  headAt: { segment: string; end: number } | undefined;
}> {
  const names = (await store.segments()).filter((n) => parseSegmentName(n) !== undefined);
  // The segment holding the head and those after. Without one (a database made from a
  // checkpoint), the segments that may hold commits after its seq: a segment holds the commits
  // from its name's seq up to the next segment's, so one followed by a segment named at most
  // seq + 1 holds none (on an object store, one commit per segment: the checkpoint spares a
  // new server every GET before it).
  const from = head.segment ? names.filter((n) => n >= head.segment) : names.filter((_, i) => !(i + 1 < names.length && Number(names[i + 1]) <= head.seq + 1));
  const commits: LoggedFrame[] = [];
  let seq = head.seq;
  let prev = head.hash;
  let last: { segment: string; end: number; size: number } | undefined;
  let headAt: { segment: string; end: number } | undefined;
  // Up to readAhead segments in flight, consumed in order. (Each is caught as it is made: one
  // that fails while an earlier one is read is thrown when its turn comes, not left unhandled.)
  const ahead = Math.max(1, store.readAhead ?? 1);
  const reads: Promise<Uint8Array>[] = [];
  const fetch = (i: number) => {
    if (i >= from.length) return;
    const read = store.readSegment(from[i]!);
    read.catch(() => undefined);
    reads[i] = read;
  };
  for (let i = 0; i < ahead; i++) fetch(i);
  scan: for (const [i, name] of from.entries()) {
    const bytes = await reads[i]!;
    delete reads[i];
    fetch(i + ahead);
    const start = name === head.segment ? head.end : 0;
    if (start > bytes.length) {
      // Shorter than the commits the database applied from it: cut, or replaced. Appended to
      // now, the next commit would land where no reader reaches it (a trial lost its puts so).
      throw new CorruptDataError(`log segment ${name} holds ${bytes.length} bytes, fewer than the ${start} the database applied from it: the log was cut (damaged)`, 'log');
    }
    const { frames, end } = readFrames(bytes, start);
    if (stopAtGap && frames.length === 0 && start === 0) break;
    if (start === 0 && frames.length) checkFirstCommit(name, frames[0]!.seq, store.sealing !== undefined, oneCommitEach(store));
    for (const f of frames) {
      if (f.seq === head.seq && head.seq > 0) {
        if (!sameHash(f.hash, head.hash)) throw new CorruptDataError(`commit ${f.seq} in segment ${name} is not the one the database (or its checkpoint) applied`, 'log');
        headAt = { segment: name, end: f.offset + f.length };
      }
      if (f.seq <= seq) continue; // covered by a checkpoint the database was made from
      if (f.seq !== seq + 1 || !sameHash(f.prev, prev)) {
        if (stopAtGap) break scan;
        // Where the missing commits were: a segment before holding bytes that are no whole
        // commit (damaged, or cut), named — the break is only where it shows.
        const where = last && last.end < last.size && last.segment !== name ? `; segment ${last.segment} holds ${last.size - last.end} bytes that are no whole commit (damaged?)` : '';
        throw new CorruptDataError(`the log's chain breaks at commit ${f.seq} in segment ${name} (expected ${seq + 1} after ${bytesToHex(prev).slice(0, 12)}…)${where}`, 'log');
      }
      commits.push({ frame: f, segment: name });
      seq = f.seq;
      prev = f.hash;
    }
    // Bytes after the last frame of a segment that is not the newest are an append that failed
    // (and whose truncation failed too): never committed. The chain check of the next
    // segment's frames decides whether anything is missing.
    last = { segment: name, end, size: bytes.length };
    // Bytes after the newest segment's last intact frame are a torn append, cut by the next
    // writer — unless they are no torn append (tailDamage): then they are damage in the log.
    if (i === from.length - 1 && end < bytes.length && !stopAtGap) {
      const damage = tailDamage(bytes, end);
      if (damage) throw logDamage(name, damage);
    }
  }
  return { commits, last, headAt };
}

/**
 * A segment's commits are numbered from its name on (FORMAT.md §15.2), and on object storage a
 * segment holds the one commit its name says. A commit numbered below its segment's name (or,
 * on object storage, other than it) is a copy of one from elsewhere in the log — replayed, or
 * swapped — or a forgery: damage, never passed over. (Passed over as "applied already", it was
 * never authenticated, verify said ok, and a writer on object storage lost the race for that
 * seq to it forever: a trial.) A local segment may begin past its name: a commit made while
 * the writer was opening it went to the segment before (a review: a browser store's log).
 */
export function checkFirstCommit(segment: string, seq: number, sealed: boolean, exact: boolean): void {
  if (exact ? seq === Number(segment) : seq >= Number(segment)) return;
  throw new CorruptDataError(
    `log segment ${segment} begins with commit ${seq}, ${exact ? `not commit ${Number(segment)}` : `below its name`}: a copy of another commit (replayed or swapped) or a forgery, not this store's log`,
    sealed ? 'unauthentic' : 'log',
  );
}

/** A log on object storage (object-log.ts): one commit an object, named by its seq. */
export function oneCommitEach(store: LogStore): boolean {
  return typeof (store as { segmentsAfter?: unknown }).segmentsAfter === 'function';
}

/** A frame and the segment it was read from. */
export interface LoggedFrame {
  frame: Frame;
  segment: string;
}

/** A writer's id: 16 random hex digits, new at every open (FORMAT.md §15.2 `w`). */
export function newWriterId(): string {
  return randomHex(8);
}

/** The head a log starts from when there is nothing before it. */
export function emptyHead(): LogHead {
  return { seq: 0, hash: ZERO_HASH.slice(), segment: '', end: 0 };
}

/** Damage in the log at `damage.offset` of `segment` (frame.ts tailDamage): nothing cut; what a forced rebuild cuts. */
export function logDamage(segment: string, damage: { offset: number; why: string }): CorruptDataError {
  return Object.assign(
    new CorruptDataError(`log segment ${segment} is damaged at offset ${damage.offset}: ${damage.why}; nothing was cut (a forced rebuild (kura rebuild --force; in a browser, BrowserStore.rebuild(name, { force: true })) cuts the log there, keeping what it cuts beside it)`, 'log'),
    { segment, offset: damage.offset },
  );
}
