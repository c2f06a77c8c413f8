/**
 * `kura grep` against ripgrep (Debian's `rg`) over the same text, in the same run (issue 48:
 * >= 0.5x ripgrep): 1,000 files of 64 KiB of seeded text-like bytes written to a directory and
 * added to a store; each pattern scanned whole by `store.grep` and by rg over the directory,
 * in two forms — counts (`count: true` against `rg --count`) and the matching lines as events
 * (against `rg --json`). rg reads files the operating system keeps in its page cache (warmed
 * first); the store keeps the texts grep read and checked (text-cache.ts), and its first grep
 * after opening — every text read back from the packs, decompressed and checked — is a row of
 * its own, beside the floor: every file read back whole and checked (getBytes). MB/s of text. */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Store } from '@kura/store';
import { textLike } from '../../lib/data.mjs';

const FILES = 1000;
const SIZE = 64 * 1024;
const PATTERNS = [
  ['literal word', 'harbour', false],
  ['word, ignoring case', 'HARBOUR', true],
  ['alternation and classes', '\\b(ab|cd)[a-z]{3,}\\d?\\b', false],
];

function rgVersion() {
  const r = spawnSync('rg', ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.split('\n')[0] : undefined;
}

export async function grepVersusRipgrep(root, full, log) {
  const dir = join(root, 'grep-tree');
  mkdirSync(dir);
  const bytes = textLike(FILES * SIZE, 5, 4096);
  // A known word at a known rate: one line in 64 holds it.
  let store = await Store.init(join(root, 'grep-store'));
  const rows = [];
  try {
    for (let i = 0; i < FILES; i++) {
      const piece = Buffer.from(bytes.subarray(i * SIZE, (i + 1) * SIZE));
      const lines = piece.toString('latin1').split('\n').map((l, k) => (k % 64 === 0 ? `${l} harbour` : l)).join('\n');
      const file = Buffer.from(lines, 'latin1');
      writeFileSync(join(dir, `f${String(i).padStart(4, '0')}.txt`), file);
      await store.put(file, { path: `t/f${String(i).padStart(4, '0')}.txt`, mediaType: 'text/plain' });
    }
    const total = FILES * SIZE;
    await store.indexStatus({ wait: true });
    const rg = rgVersion();
    if (rg) spawnSync('rg', ['--count', 'x', dir]); // the page cache warm for rg too
    const rounds = full ? 5 : 2;
    // The floor: every document read back whole and checked (decompressed, its SHA-256), as
    // grep reads it before matching a byte — what grep cannot go below without returning
    // unchecked bytes.
    const digests = [];
    for await (const e of store.grep('^', {})) if (e.type === 'begin') digests.push(e.digest);
    let floorMs = 0;
    for (let r = 0; r < rounds; r++) {
      const t0 = performance.now();
      for (const d of digests) await store.getBytes(d);
      floorMs += performance.now() - t0;
    }
    rows.push({ family: 'grep', group: 'read back (the floor)', impl: 'kura getBytes, every file', size: total, mbPerSec: (total * rounds) / 1e6 / (floorMs / 1000), pattern: '' });
    // The first grep after opening reads and checks every text (the floor's work, on the
    // workers); the store keeps the checked texts (text-cache.ts), as the operating system
    // keeps rg's files in its page cache: the rounds below match kept texts, rg cached files.
    await store.close();
    store = await Store.open(join(root, 'grep-store'));
    let t0 = performance.now();
    for await (const e of store.grep(PATTERNS[0][1], { count: true })) void e;
    rows.push({ family: 'grep', group: 'first grep after opening', impl: 'kura grep -c (reads and checks every text)', size: total, mbPerSec: total / 1e6 / ((performance.now() - t0) / 1000), pattern: PATTERNS[0][1] });
    // Each pattern in two forms, each beside ripgrep's: counts (`-c`, rg --count) and the
    // matching lines as events (rg --json, which also gives each line, its number and match).
    for (const [name, pattern, ignoreCase] of PATTERNS) {
      for (const form of ['count', 'lines']) {
        const group = `${name}, ${form === 'count' ? 'counts (-c)' : 'lines'}`;
        let kuraMs = 0;
        let rgMs = 0;
        let kuraLines = 0;
        let rgLines = 0;
        for (let r = 0; r < rounds; r++) {
          // Alternated, so both see the same machine.
          t0 = performance.now();
          let n = 0;
          for await (const e of store.grep(pattern, { ignoreCase, ...(form === 'count' ? { count: true } : {}) })) if (e.type === 'summary') n = e.matches;
          kuraMs += performance.now() - t0;
          kuraLines = n;
          if (rg) {
            t0 = performance.now();
            const out = spawnSync('rg', [form === 'count' ? '--count' : '--json', '--no-filename', ...(ignoreCase ? ['-i'] : []), pattern, dir], { encoding: 'utf8', maxBuffer: 1 << 28 });
            rgMs += performance.now() - t0;
            const lines = out.stdout.trim().split('\n').filter(Boolean);
            rgLines = form === 'count' ? lines.reduce((a, l) => a + Number(l), 0) : lines.filter((l) => l.startsWith('{"type":"match"')).length;
          }
        }
        const mbps = (ms) => (total * rounds) / 1e6 / (ms / 1000);
        if (rg && rgLines !== kuraLines) log(`grep: ${group}: kura counted ${kuraLines} lines, rg ${rgLines}`);
        rows.push({ family: 'grep', group, impl: 'kura grep (store)', size: total, mbPerSec: mbps(kuraMs), lines: kuraLines, pattern });
        rows.push(rg ? { family: 'grep', group, impl: `${rg} ${form === 'count' ? '--count' : '--json'} (files on disk)`, size: total, mbPerSec: mbps(rgMs), lines: rgLines, pattern, peer: true } : { family: 'grep', group, impl: 'ripgrep', size: total, unavailable: 'rg not installed (apt-get install ripgrep; scripts/bootstrap.sh does)' });
      }
    }
  } finally {
    await store.close();
  }
  return rows;
}

export const grepFamily = {
  title: `grep over ${FILES.toLocaleString('en')} files of 64 KiB (${(FILES * SIZE / 2 ** 20).toFixed(0)} MiB of text): kura grep over the store against ripgrep over the same files on disk, alternated`,
  ratio: () => undefined,
  extra: [
    { header: 'pattern', value: (r) => r.pattern },
    { header: 'MB/s', value: (r) => (r.mbPerSec === undefined ? '' : r.mbPerSec.toFixed(0)) },
    { header: 'lines', value: (r) => r.lines ?? '' },
  ],
};
