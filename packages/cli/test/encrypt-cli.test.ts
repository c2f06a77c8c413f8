/**
 * Encrypted stores from the command line (FORMAT.md §17, decision 0062): `kura init --encrypt`,
 * every command opening the store with its password from --password-command, KURA_PASSWORD_FILE
 * or KURA_PASSWORD (a wrong or missing one: exit 2, WRONG_PASSWORD, nothing written),
 * `kura key add|list|passwd|remove`, and `kura copy --encrypt` from a plain store; no marker
 * word or path readable in the store's directory afterwards.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { afterAll, describe, expect, it } from 'vitest';
import { startServe } from './helpers/serve.js';

const BIN = fileURLToPath(new URL('../bin/kura.js', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'kura-enc-cli-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

/** Runs kura with the store, a cache of the test's own and no terminal (stdin closed, no /dev/tty prompt taken). */
function kuraIn(store: string, env: Record<string, string | undefined> = {}) {
  return (...args: string[]) =>
    spawnSync('setsid', ['-w', process.execPath, BIN, '--store', store, ...args], {
      encoding: 'utf8',
      env: { ...process.env, KURA_CACHE: join(root, 'cache'), KURA_PASSWORD: undefined, KURA_PASSWORD_FILE: undefined, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
}

describe('damage to an encrypted store found as it opens', () => {
  it('verify says it and exits 3, naming the damaged log object (it exited 1, naming the next one)', { timeout: 60_000 }, () => {
    const store = join(root, 'store-damaged');
    const pwFile = join(root, 'pw-damaged');
    writeFileSync(pwFile, 'a good password\n');
    const kura = kuraIn(store, { KURA_PASSWORD_FILE: pwFile, KURA_CACHE: join(root, 'cache-damaged') });
    expect(kura('init', '--encrypt', '--kdf-memory', '8').status).toBe(0);
    const doc = join(root, 'doc.txt');
    for (let i = 1; i <= 3; i++) {
      writeFileSync(doc, `doc ${i}\n`);
      expect(kura('add', doc, '--path', `d${i}.txt`).status).toBe(0);
    }
    const log = readdirSync(join(store, 'log')).sort();
    const middle = join(store, 'log', log[log.length - 2]!);
    const b = readFileSync(middle);
    b[60]! ^= 1;
    writeFileSync(middle, b);
    // A fresh cache (a backup restored elsewhere): the log is read as the store opens.
    const fresh = kuraIn(store, { KURA_PASSWORD_FILE: pwFile, KURA_CACHE: join(root, 'cache-fresh') });
    const r = fresh('verify');
    expect(r.status, r.stderr).toBe(3);
    expect(r.stderr).toMatch(/^kura: damaged: the store could not be opened: .*\[CORRUPT_DATA\]\n$/);
    expect(r.stderr).toContain(log[log.length - 2]!);
    const j = fresh('verify', '--json');
    expect(j.status).toBe(3);
    expect(JSON.parse(j.stdout)).toMatchObject({ ok: false, opened: false, damaged: { code: 'CORRUPT_DATA' } });
  });
});

describe('kura with an encrypted store', () => {
  it('init --encrypt, every command with the password, keys added, changed and removed', { timeout: 120_000 }, () => {
    const store = join(root, 'store');
    const pwFile = join(root, 'pw');
    writeFileSync(pwFile, 'first secret\n');
    const kura = kuraIn(store, { KURA_PASSWORD_FILE: pwFile });
    const init = kura('init', '--encrypt', '--kdf-memory', '8', '--json');
    expect(init.status, init.stderr).toBe(0);
    expect(JSON.parse(init.stdout)).toMatchObject({ encrypted: true });
    expect(JSON.parse(init.stdout).seed).toBeUndefined(); // secret: never printed
    expect(kura('init', '--seed', '5', '--encrypt').status).toBe(2);
    // A password given without --encrypt made a plain store that every later command refused.
    const mistaken = kuraIn(join(root, 'plain-by-mistake'), { KURA_PASSWORD_FILE: pwFile })('init');
    expect([mistaken.status, mistaken.stderr]).toEqual([2, expect.stringMatching(/a password is configured .* but --encrypt is not given/)]);
    expect(existsSync(join(root, 'plain-by-mistake'))).toBe(false);
    const noWay = kuraIn(join(root, 'no-password'))('init', '--encrypt'); // no terminal, no source
    expect([noWay.status, noWay.stderr]).toEqual([2, expect.stringMatching(/--password-command, KURA_PASSWORD_FILE or KURA_PASSWORD/)]);

    const notes = join(root, 'quartermaster.txt');
    writeFileSync(notes, 'the hieroglyphical ledger of the quartermaster\n'.repeat(50));
    const add = kura('add', notes, '--as', 'ledger', '--tag', 'confidential-tag');
    expect(add.status, add.stderr).toBe(0);
    expect(kura('ls').stdout).toContain('ledger/quartermaster.txt');
    expect(kura('get', 'ledger/quartermaster.txt').stdout).toBe('the hieroglyphical ledger of the quartermaster\n'.repeat(50));
    expect(kura('search', 'hieroglyphical').stdout).toContain('ledger/quartermaster.txt');
    expect(kura('verify').status).toBe(0);
    // No password and no terminal: said as init says it (it named the library's option, and a
    // prompt that could not be: a trial); a line end at the end of KURA_PASSWORD is not the
    // password's, as a file's is not.
    const none = kuraIn(store, { KURA_PASSWORD_FILE: '' })('ls');
    expect([none.status, none.stderr]).toEqual([2, expect.stringMatching(/there is no terminal to ask for its password on: give it with --password-command, KURA_PASSWORD_FILE or KURA_PASSWORD \[WRONG_PASSWORD\]\n$/)]);
    expect(none.stderr).not.toMatch(/option|prompt/);
    expect(kuraIn(store, { KURA_PASSWORD_FILE: '', KURA_PASSWORD: 'first secret\n' })('ls').stdout).toContain('ledger/quartermaster.txt');
    // Its database is its cache's: rebuilt there from the store's log (it was refused: two
    // trials), and everything reads as before. (Changed on purpose.)
    const rebuild = kura('rebuild');
    expect([rebuild.status, rebuild.stderr]).toEqual([0, '']);
    expect(rebuild.stdout).toMatch(/^rebuilt the database of .* in its cache .* from the store's log, up to commit \d+/);
    expect(kura('get', 'ledger/quartermaster.txt').stdout).toBe('the hieroglyphical ledger of the quartermaster\n'.repeat(50));
    expect(kura('search', 'hieroglyphical').stdout).toContain('ledger/quartermaster.txt');
    // A rebuild that cannot open the store (a wrong password) leaves the cache's database as it was.
    const cacheDb = () => (readdirSync(join(root, 'cache'), { recursive: true }) as string[]).filter((f) => f.endsWith('kura.db'));
    expect(cacheDb()).toHaveLength(1);
    expect(kuraIn(store, { KURA_PASSWORD: 'not it' })('rebuild').status).toBe(2);
    expect(cacheDb()).toHaveLength(1); // (it was deleted first, and nothing made again)
    expect(kura('ls').stdout).toContain('ledger/quartermaster.txt');

    // Wrong, missing: exit 2, said, and the store is as it was.
    const before = files(store).map((f) => `${f} ${readFileSync(f).length}`).sort();
    const wrong = kuraIn(store, { KURA_PASSWORD: 'not it' })('ls');
    expect([wrong.status, wrong.stderr]).toEqual([2, expect.stringMatching(/WRONG_PASSWORD/)]);
    const missing = kuraIn(store)('ls');
    expect([missing.status, missing.stderr]).toEqual([2, expect.stringMatching(/encrypted.*password.*\[WRONG_PASSWORD\]/)]);
    expect(files(store).map((f) => `${f} ${readFileSync(f).length}`).sort()).toEqual(before);
    // --password-command, and KURA_PASSWORD.
    expect(kuraIn(store)('--password-command', 'printf "first secret"', 'ls').stdout).toContain('ledger/');
    // Sources that fail say so in the error format, each naming itself (a trial).
    const failing = kuraIn(store)('--password-command', 'false', 'ls');
    expect([failing.status, failing.stderr]).toEqual([2, `kura: ${store}: --password-command "false" failed (exit 1): no password [PASSWORD_SOURCE]\n`]);
    const noFile = kuraIn(store, { KURA_PASSWORD_FILE: join(root, 'nonexistent') })('ls');
    expect([noFile.status, noFile.stderr]).toEqual([2, `kura: ${store}: KURA_PASSWORD_FILE ${join(root, 'nonexistent')}: no such file or directory [ENOENT]\n`]);
    writeFileSync(join(root, 'empty-pw'), '\n');
    const empty = kuraIn(store, { KURA_PASSWORD_FILE: join(root, 'empty-pw') })('ls');
    expect([empty.status, empty.stderr]).toEqual([2, expect.stringMatching(/its first line is empty: no password \[PASSWORD_SOURCE\]/)]);
    expect(kuraIn(store, { KURA_PASSWORD: 'first secret' })('ls').stdout).toContain('ledger/');

    // Keys: another password, listed; the first changed; the last cannot go.
    const second = join(root, 'pw2');
    writeFileSync(second, 'second secret\n');
    const added = kura('key', 'add', '--new-password-file', second, '--kdf-memory', '8', '--json');
    expect(added.status, added.stderr).toBe(0);
    const { id: secondId } = JSON.parse(added.stdout) as { id: string };
    const listed = kura('key', 'list', '--json').stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(listed.map((k) => k.id)).toContain(secondId);
    expect(listed.filter((k) => k.current)).toHaveLength(1);
    expect(listed.find((k) => k.id === secondId).kdf).toEqual({ memoryKib: 8192, passes: 3, lanes: 4 });
    // --kdf-memory is in MiB, bounded in MiB (the KiB bounds were quoted, and 1 MiB taken: a trial).
    const tiny = kura('key', 'add', '--new-password-file', second, '--kdf-memory', '1');
    expect([tiny.status, tiny.stderr]).toEqual([2, expect.stringMatching(/--kdf-memory is in MiB, from 8 .* to 1024, not 1/)]);
    const bySecond = kuraIn(store, { KURA_PASSWORD_FILE: second });
    expect(bySecond('ls').stdout).toContain('ledger/');

    const third = join(root, 'pw3');
    writeFileSync(third, 'third secret\n');
    const changed = kura('key', 'passwd', '--new-password-file', third, '--kdf-memory', '8', '--json');
    expect(changed.status, changed.stderr).toBe(0);
    expect(JSON.parse(changed.stdout)).toMatchObject({ id: expect.stringMatching(/^[0-9a-f]{16}$/), removed: [expect.stringMatching(/^[0-9a-f]{16}$/)] });
    expect(kura('ls').status).toBe(2); // the first password no longer opens it
    // A second key file for a password that has one is refused: passwd then ends a password.
    const twice = kuraIn(store, { KURA_PASSWORD_FILE: third })('key', 'add', '--new-password-file', second, '--kdf-memory', '8');
    expect([twice.status, twice.stderr]).toEqual([2, expect.stringMatching(/opens key [0-9a-f]{16} already.*\[INVALID_INPUT\]/)]);
    const byThird = kuraIn(store, { KURA_PASSWORD_FILE: third });
    expect(byThird('ls').stdout).toContain('ledger/');
    expect(byThird('key', 'list', '--json').stdout.trim().split('\n')).toHaveLength(2);

    // The key the password given opens is not removed while another exists (restic refuses too).
    const { id: thirdId } = (byThird('key', 'list', '--json').stdout.trim().split('\n').map((l) => JSON.parse(l)) as { id: string; current: boolean }[]).find((k) => k.current)!;
    const own = byThird('key', 'remove', thirdId);
    expect([own.status, own.stderr]).toEqual([2, expect.stringMatching(/is the one the password given opens: removing it would lock that password out/)]);
    expect(byThird('ls').stdout).toContain('ledger/');
    // A removal waiting for the key lock says so (a crashed holder's, taken over when stale;
    // it waited a minute without a word: a trial).
    writeFileSync(join(store, 'keys-lock'), '{"holder":"crashed","time":0}\n');
    utimesSync(join(store, 'keys-lock'), new Date(Date.now() - 120_000), new Date(Date.now() - 120_000));
    const removed = byThird('key', 'remove', secondId);
    expect([removed.status, removed.stderr]).toEqual([0, expect.stringMatching(/waiting for the key lock/)]);
    // ... and says what a removed password's key file still opens: the same key (a trial read it as re-encrypted).
    expect(removed.stdout).toMatch(/stays encrypted with the same key.*kura copy SRC DST --encrypt/);
    expect(bySecond('ls').status).toBe(2);
    const { id: lastId } = JSON.parse(byThird('key', 'list', '--json').stdout.trim());
    const last = byThird('key', 'remove', lastId);
    expect([last.status, last.stderr]).toEqual([2, expect.stringMatching(/last key/)]);
    expect(byThird('ls').stdout).toContain('ledger/');

    // Damage: a pack's byte changed is reported by verify (exit 3) and by a read, never returned.
    const big = join(root, 'noise.bin');
    writeFileSync(big, randomBytes(600 * 1024));
    expect(byThird('add', big, '--as', 'data').status).toBe(0);
    const pack = files(store).find((f) => f.includes('/packs/'))!;
    expect(pack).toBeDefined();
    const bytes = readFileSync(pack);
    bytes[bytes.length >> 1]! ^= 0x40;
    writeFileSync(pack, bytes);
    const verified = byThird('verify', '--read-data', '--json');
    expect(verified.status, verified.stderr).toBe(3);
    expect(JSON.stringify(JSON.parse(verified.stdout).damagedChunks)).toContain('unauthentic');
    // (This machine's cache keeps a checked copy of the packs it wrote, and reads from it: a
    // reader with a cache of its own reads the store's changed pack.)
    const read = kuraIn(store, { KURA_PASSWORD_FILE: third, KURA_CACHE: join(root, 'other-cache') })('get', 'data/noise.bin');
    expect([read.status, read.stdout.length, read.stderr]).toEqual([1, expect.any(Number), expect.stringMatching(/CORRUPT_DATA/)]);
    expect(read.stdout.length).toBeLessThan(600 * 1024);

    // Nothing of it readable in the store's directory.
    for (const f of files(store)) {
      const text = readFileSync(f).toString('latin1');
      for (const marker of ['hieroglyphical', 'quartermaster', 'confidential-tag']) expect(text.includes(marker), `${marker} in ${f}`).toBe(false);
    }
  });

  it('copy --encrypt makes an encrypted copy of a plain store, and a second run copies nothing', { timeout: 120_000 }, () => {
    const plain = join(root, 'plain');
    const enc = join(root, 'enc-copy');
    const kura = kuraIn(plain);
    expect(kura('init').status).toBe(0);
    const doc = join(root, 'aardvark.txt');
    writeFileSync(doc, 'an unmistakable aardvark of a document\n');
    expect(kura('add', doc, '--as', 'zoo').status).toBe(0);
    const pw = join(root, 'enc-pw');
    writeFileSync(pw, 'copy secret\n');
    const copied = kura('copy', plain, enc, '--encrypt', '--dst-password-file', pw, '--json');
    expect(copied.status, copied.stderr).toBe(0);
    expect(JSON.parse(copied.stdout)).toMatchObject({ versionsCopied: 1 });
    const again = kura('copy', plain, enc, '--dst-password-file', pw, '--json');
    expect(again.status, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ versionsCopied: 0, versionsPresent: 1 });
    // The same command again: the encrypted store a copy --encrypt made is gone on with (it was
    // refused, "holds a store already", so a copy --encrypt killed part way could not be completed).
    const same = kura('copy', plain, enc, '--encrypt', '--dst-password-file', pw, '--json');
    expect(same.status, same.stderr).toBe(0);
    expect(JSON.parse(same.stdout)).toMatchObject({ versionsCopied: 0, versionsPresent: 1, created: false });
    const byPw = kuraIn(enc, { KURA_PASSWORD_FILE: pw });
    expect(byPw('get', 'zoo/aardvark.txt').stdout).toBe('an unmistakable aardvark of a document\n');
    for (const f of files(enc)) expect(readFileSync(f).toString('latin1').includes('aardvark'), f).toBe(false);
    // And back: the encrypted store copied to a plain one (its secret seed not carried over).
    const back = join(root, 'plain-again');
    // Not without saying so (--plain): refused before anything is made (a trial's backup
    // script forgot --encrypt and wrote every byte in plain form).
    const refused = byPw('copy', enc, back);
    expect([refused.status, refused.stderr]).toEqual([2, expect.stringContaining('pass --encrypt to make an encrypted copy (DST must not exist), or --plain')]);
    expect(existsSync(back)).toBe(false);
    const out = byPw('copy', enc, back, '--plain', '--json');
    expect(out.status, out.stderr).toBe(0);
    expect(out.stderr).toContain(`kura: note: ${enc} is encrypted and ${back} is not: the copy holds its data in plain form`);
    // Two stores, two passwords: a wrong one says whose.
    const badPw = join(root, 'bad-pw');
    writeFileSync(badPw, 'not the copy secret\n');
    const wrongDst = kura('copy', plain, enc, '--dst-password-file', badPw);
    expect([wrongDst.status, wrongDst.stderr]).toEqual([2, expect.stringMatching(new RegExp(`^kura: the destination ${enc}: no key file .*\\[WRONG_PASSWORD\\]`))]);
    // --encrypt goes on only with an encrypted store the password given opens, never a plain one.
    const wrongEncrypt = kura('copy', plain, enc, '--encrypt', '--dst-password-file', badPw);
    expect([wrongEncrypt.status, wrongEncrypt.stderr]).toEqual([2, expect.stringMatching(new RegExp(`^kura: the destination ${enc}: no key file .*\\[WRONG_PASSWORD\\]`))]);
    const plainDst = kura('copy', plain, back, '--encrypt', '--dst-password-file', pw);
    expect([plainDst.status, plainDst.stderr]).toEqual([2, `kura: ${back} holds a plain store already: --encrypt makes a new encrypted store (or goes on with one a copy --encrypt began) [INVALID_INPUT]\n`]);
    const wrongSrc = kuraIn(enc, { KURA_PASSWORD_FILE: badPw })('copy', enc, join(root, 'never-made'));
    expect([wrongSrc.status, wrongSrc.stderr]).toEqual([2, expect.stringMatching(new RegExp(`^kura: the source ${enc}: no key file .*\\[WRONG_PASSWORD\\]`))]);
    expect(kuraIn(back)('get', 'zoo/aardvark.txt').stdout).toBe('an unmistakable aardvark of a document\n');
    expect(JSON.parse(readFileSync(join(back, 'kura-store.json'), 'utf8')).chunk_seed).toBe('0');
  });

  it('copy --encrypt killed part way completes when the same command runs again; so does one killed before its configuration', { timeout: 300_000 }, async () => {
    const src = join(root, 'kill-src');
    const kura = kuraIn(src);
    expect(kura('init').status).toBe(0);
    const notes = join(root, 'kill-notes');
    mkdirSync(notes);
    for (let i = 0; i < 1500; i++) writeFileSync(join(notes, `n${i}.txt`), `note ${i} ${'y'.repeat(300 + i)}\n`);
    expect(kura('add', notes, '--as', 'notes').status).toBe(0);
    const pw = join(root, 'kill-pw');
    writeFileSync(pw, 'kill secret\n');
    const dst = join(root, 'kill-dst');
    const args = ['copy', src, dst, '--encrypt', '--dst-password-file', pw, '--json'];
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, KURA_CACHE: join(root, 'cache'), KURA_PASSWORD: undefined, KURA_PASSWORD_FILE: undefined }, stdio: 'ignore' });
    const exited = once(child, 'exit');
    // Killed once its destination has its keys, its configuration and its first commits.
    const commits = () => (existsSync(join(dst, 'log')) ? readdirSync(join(dst, 'log')).length : 0);
    while (commits() < 3 && child.exitCode === null) await new Promise((r) => setTimeout(r, 5));
    child.kill('SIGKILL');
    await exited;
    expect(existsSync(join(dst, 'keys'))).toBe(true);
    const byPw = kuraIn(dst, { KURA_PASSWORD_FILE: pw });
    const partial = byPw('ls', '--json').stdout.trim().split('\n').filter(Boolean).length;
    expect(partial).toBeLessThan(1500); // killed part way
    // The same command again (it was refused: "holds a store already: --encrypt makes a new one").
    const again = kura(...args);
    expect(again.status, again.stderr).toBe(0);
    const report = JSON.parse(again.stdout);
    expect(report).toMatchObject({ created: false, errors: [] });
    expect(report.versionsCopied + report.versionsPresent).toBe(1500);
    const verified = byPw('verify');
    expect(verified.status, verified.stdout + verified.stderr).toBe(0);
    const entries = (r: { stdout: string }) => r.stdout.trim().split('\n').sort();
    expect(entries(byPw('ls', '--json'))).toEqual(entries(kura('ls', '--json')));
    expect(byPw('get', 'notes/n1499.txt').stdout).toBe(`note 1499 ${'y'.repeat(1799)}\n`);
    expect(JSON.parse(kura(...args).stdout)).toMatchObject({ versionsCopied: 0, versionsPresent: 1500 }); // and again: nothing

    // Killed between its first key file and its configuration (~0.1 s): key files alone, which
    // no password can open (nothing binds them to a store yet) and Store.init refuses to make a
    // store beside. Made here by hand, as that kill leaves it.
    const cut = join(root, 'kill-cut');
    mkdirSync(join(cut, 'keys'), { recursive: true, mode: 0o700 });
    for (const k of readdirSync(join(dst, 'keys'))) writeFileSync(join(cut, 'keys', k), readFileSync(join(dst, 'keys', k)), { mode: 0o600 });
    const made = kura('copy', src, cut, '--encrypt', '--dst-password-file', pw, '--json');
    expect(made.status, made.stderr).toBe(0);
    expect(made.stderr).toContain(`kura: note: ${cut} held only the key file of a store whose making was cut off`);
    expect(JSON.parse(made.stdout)).toMatchObject({ created: true, versionsCopied: 1500 });
    expect(kuraIn(cut, { KURA_PASSWORD_FILE: pw })('verify').status).toBe(0);
    // Anything besides key files is not a making cut off: refused as before.
    const other = join(root, 'kill-other');
    mkdirSync(join(other, 'keys'), { recursive: true });
    writeFileSync(join(other, 'keys', '0123456789abcdef'), '{}');
    writeFileSync(join(other, 'notes.txt'), 'mine\n');
    const refused = kura('copy', src, other, '--encrypt', '--dst-password-file', pw);
    expect(refused.status).toBe(2);
    expect(readFileSync(join(other, 'keys', '0123456789abcdef'), 'utf8')).toBe('{}');
  });

  it('with a password configured, a plain store in its place is refused (a swap of the storage), and serve makes none', { timeout: 120_000 }, async () => {
    const store = join(root, 'swapped');
    const pw = join(root, 'swapped-pw');
    writeFileSync(pw, 'swapped secret\n');
    expect(kuraIn(store)('init').status).toBe(0); // the attacker's plain store, say
    const before = files(store).map((f) => `${f} ${statSync(f).size}`).sort();
    for (const env of [{ KURA_PASSWORD_FILE: pw }, { KURA_PASSWORD: 'swapped secret' }]) {
      const ls = kuraIn(store, env)('ls');
      expect(ls.status).toBe(1);
      expect(ls.stderr).toMatch(/holds a plain store, not an encrypted one.*\[FORMAT_MISMATCH\]/);
    }
    const add = kuraIn(store, { KURA_PASSWORD_FILE: pw })('add', pw);
    expect(add.status).toBe(1);
    expect(files(store).map((f) => `${f} ${statSync(f).size}`).sort()).toEqual(before); // nothing written
    expect(kuraIn(store)('ls').status).toBe(0); // no password configured: a plain store, as ever
    // (A server that started would not exit: the timeout ends it, and the test fails.)
    const serve = (dir: string) =>
      spawnSync(process.execPath, [BIN, '--store', dir, 'serve', '--no-auth', '--port', '0'], {
        encoding: 'utf8',
        timeout: 30_000,
        env: { ...process.env, KURA_CACHE: join(root, 'cache'), KURA_PASSWORD_FILE: pw, KURA_SEMANTIC: 'off' },
      });
    const refused = serve(store);
    expect(refused.status, refused.stderr).toBe(1);
    expect(refused.stderr).toContain('FORMAT_MISMATCH');
    // Nothing at all there: no plain store is made where an encrypted one is expected.
    const none = serve(join(root, 'nothing-yet'));
    expect(none.status, none.stderr).toBe(1);
    expect(none.stderr).toContain('kura init --encrypt');
  });

  it('kura serve opens it with the password (refuses to start without it); uploads are staged in its cache, not in the store', { timeout: 120_000 }, async () => {
    const store = join(root, 'served');
    const pw = join(root, 'served-pw');
    writeFileSync(pw, 'served secret\n');
    expect(kuraIn(store, { KURA_PASSWORD_FILE: pw })('init', '--encrypt', '--kdf-memory', '8').status).toBe(0);
    const env = { KURA_CACHE: process.env.KURA_CACHE, KURA_PASSWORD_FILE: process.env.KURA_PASSWORD_FILE };
    process.env.KURA_CACHE = join(root, 'cache');
    try {
      delete process.env.KURA_PASSWORD_FILE;
      await expect(startServe(BIN, store)).rejects.toThrow(/exited \(2\)/); // WRONG_PASSWORD, a usage error
      process.env.KURA_PASSWORD_FILE = pw;
      const { server, url } = await startServe(BIN, store);
      try {
        const config = (await (await fetch(`${url}/v1/config`)).json()) as { encrypted: boolean; chunking: { seed?: string } };
        expect(config.encrypted).toBe(true);
        expect(config.chunking.seed).toBeUndefined();
        const body = 'a platypus-shaped secret, uploaded in two parts\n'.repeat(200);
        const started = await fetch(`${url}/v1/uploads`, { method: 'POST' });
        expect(started.status).toBe(202);
        const at = new URL(started.headers.get('location')!, url).toString();
        const half = body.length / 2;
        expect((await fetch(at, { method: 'PATCH', body: body.slice(0, half) })).status).toBe(202);
        // Half an upload is staged: nowhere in the store's directory.
        for (const f of files(store)) expect(readFileSync(f).toString('latin1').includes('platypus'), f).toBe(false);
        const digest = `sha256:${createHash('sha256').update(body).digest('hex')}`;
        const done = await fetch(`${at}?digest=${digest}&path=zoo/platypus.txt`, { method: 'PUT', body: body.slice(half) });
        expect(done.status, await done.clone().text()).toBe(201);
        expect(await (await fetch(`${url}/v1/documents/${digest}`)).text()).toBe(body);
        for (const f of files(store)) expect(readFileSync(f).toString('latin1').includes('platypus'), f).toBe(false);
      } finally {
        server.kill('SIGTERM');
        await once(server, 'exit');
      }
    } finally {
      for (const [k, v] of Object.entries(env)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
    expect(kuraIn(store, { KURA_PASSWORD_FILE: pw })('get', 'zoo/platypus.txt').stdout).toContain('platypus-shaped');
  });

  it('asks on the terminal without echo: twice for a new store (different answers refused), once to open it', { timeout: 60_000 }, async () => {
    /** Runs kura on a pseudo-terminal (script(1)), typing each answer when its prompt shows; its output. */
    const onTerminal = (answers: string[], ...args: string[]) =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        const line = [process.execPath, BIN, ...args].map((a) => `'${a}'`).join(' ');
        const child = spawn('script', ['-qec', line, '/dev/null'], { env: { ...process.env, KURA_CACHE: join(root, 'cache'), KURA_PASSWORD: undefined, KURA_PASSWORD_FILE: undefined } });
        let out = '';
        let asked = 0;
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const prompts = (out.match(/password( again)?: /g) ?? []).length;
          // (answers: one string is all of them pasted at once at the first prompt)
          while (asked < prompts && asked < answers.length) child.stdin.write(`${answers[asked++]}\r`);
        });
        child.on('exit', (code) => resolve({ code, out }));
      });
    const store = join(root, 'prompted');
    const mismatch = await onTerminal(['one secret', 'another'], '--store', store, 'init', '--encrypt', '--kdf-memory', '8');
    expect([mismatch.code, mismatch.out]).toEqual([2, expect.stringMatching(/the passwords differ/)]);
    const made = await onTerminal(['typed secret', 'typed secret'], '--store', store, 'init', '--encrypt', '--kdf-memory', '8');
    expect(made.code, made.out).toBe(0);
    expect(made.out).not.toContain('typed secret'); // no echo
    const listed = await onTerminal(['typed secret'], '--store', store, 'ls');
    expect([listed.code, listed.out.match(/password: /g)]).toEqual([0, ['password: ']]);
    expect(kuraIn(store, { KURA_PASSWORD: 'typed secret' })('verify').status).toBe(0);
    // A password and its confirmation pasted at once: the second prompt takes what followed the first line.
    const pasted = await onTerminal(['pasted secret\rpasted secret'], '--store', join(root, 'pasted'), 'init', '--encrypt', '--kdf-memory', '8');
    expect(pasted.code, pasted.out).toBe(0);
    expect(kuraIn(join(root, 'pasted'), { KURA_PASSWORD: 'pasted secret' })('ls').status).toBe(0);
  });
});
