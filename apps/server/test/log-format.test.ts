/**
 * Log lines for the reader: on a terminal the server prints lines for people (time, level,
 * message; one line per request: method, URL, status, time, request id) instead of pino's
 * JSON; piped, or with --log-format json, it prints JSON lines for machines. Tokens are
 * redacted either way. The server runs as `kura serve` under script(1), which gives it a
 * terminal, or with its output piped.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from './helpers/process.js';

const BIN = fileURLToPath(new URL('../../../packages/cli/bin/kura.js', import.meta.url));
const TOKEN = 'log-format-token-'.padEnd(40, 'q');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const hasScript = spawnSync('script', ['--version']).status === 0;
const q = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;

/** Runs the server (on a terminal or piped), sends two requests, stops it; returns its output. */
async function run(terminal: boolean, extra: string[] = []): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'kura-logs-'));
  dirs.push(dir);
  const port = await freePort();
  const args = [BIN, '--store', join(dir, 'store'), 'serve', '--port', String(port), ...extra];
  const env = { ...process.env, KURA_TOKENS: `ops=${TOKEN}:read` };
  const child = terminal
    ? spawn('script', ['-qec', [process.execPath, ...args].map(q).join(' '), '/dev/null'], { env, detached: true })
    : spawn(process.execPath, args, { env, detached: true });
  let out = '';
  child.stdout!.on('data', (b) => (out += b));
  child.stderr!.on('data', (b) => (out += b));
  try {
    for (let i = 0; i < 200 && !out.includes('listening'); i++) await sleep(25);
    const url = `http://127.0.0.1:${port}`;
    await (await request(`${url}/v1/stats`, { headers: { authorization: `Bearer ${TOKEN}` } })).body.dump();
    await (await request(`${url}/v1/documents/nope?access_token=${TOKEN}`)).body.dump();
    await sleep(300);
  } finally {
    process.kill(-child.pid!, 'SIGTERM');
    await new Promise((r) => child.once('close', r));
  }
  // (Colours are the terminal's business: the escapes go, the text stays.)
  // eslint-disable-next-line no-control-regex
  return out.replace(/\r/g, '').replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
}

describe('server logs', () => {
  it.skipIf(!hasScript)('on a terminal: lines for people, one per request, tokens redacted', async () => {
    const out = await run(true);
    expect(out).not.toMatch(/^\{"level"/m);
    expect(out).toMatch(/INFO.*kura server listening/);
    const requests = out.split('\n').filter((l) => /\b(GET|POST) \/v1\//.test(l));
    expect(requests).toHaveLength(2); // one line each, not fastify's two
    expect(requests[0]).toMatch(/GET \/v1\/stats 200 [\d.]+ ms \([\w-]+, token ops\)/); // which token (its name): a trial
    expect(requests[1]).toMatch(/GET \/v1\/documents\/nope\?access_token=\[redacted\] 401 /);
    expect(out).not.toContain(TOKEN);
  });

  it.skipIf(!hasScript)('with --log-format json on a terminal, and whenever piped: JSON lines', async () => {
    for (const out of [await run(true, ['--log-format', 'json']), await run(false)]) {
      const lines = out.split('\n').filter((l) => l.startsWith('{'));
      expect(lines.length).toBeGreaterThan(3);
      for (const l of lines) expect(() => JSON.parse(l)).not.toThrow();
      expect(lines.some((l) => JSON.parse(l).msg === 'request completed')).toBe(true);
      // Each request's lines name the token that made it (its name only).
      expect(lines.map((l) => JSON.parse(l)).some((j) => j.msg === 'request completed' && j.token === 'ops')).toBe(true);
      expect(out).not.toContain(TOKEN);
    }
  });

  it('refuses a format it does not know', () => {
    const r = spawnSync(process.execPath, [BIN, '--store', join(tmpdir(), 'kura-never'), 'serve', '--log-format', 'xml'], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/logFormat/);
  });
});
