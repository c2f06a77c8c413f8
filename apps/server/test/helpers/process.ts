/**
 * kura-server as a separate process (apps/server/dist/main.js, as server-process.test.ts runs
 * it): KURA_* settings in, every line it writes captured, its memory and open descriptors
 * readable from /proc. Needs the build (bash scripts/build.sh).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { freePort } from '../../../../packages/store/test/helpers/ports.js';

export const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

export interface ServerProcess {
  child: ChildProcess;
  pid: number;
  port: number;
  url: string;
  /** Its store's directory (a fresh temp dir, removed by stop()). */
  dir: string;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** SIGTERM, the exit, and the temp dir removed; returns the exit code. */
  stop(): Promise<number | null>;
}

const running: ServerProcess[] = [];

export { freePort };

/** Starts one over a fresh store; up once it logged its URL and /healthz answers. */
export async function spawnServer(settings: Record<string, string> = {}): Promise<ServerProcess> {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: build first (bash scripts/build.sh)`);
  for (let attempt = 1; ; attempt++) {
    const dir = mkdtempSync(join(tmpdir(), 'kura-server-proc-'));
    const port = await freePort();
    // The caller's own KURA_* settings must not leak into the server under test.
    const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('KURA_')));
    const child = spawn(process.execPath, [MAIN], {
      // Semantic search off unless asked: the tests bound the store's memory, not the model's.
      env: { ...env, KURA_LOG_LEVEL: 'info', KURA_STORE: join(dir, 'store'), KURA_HOST: '127.0.0.1', KURA_PORT: String(port), KURA_SEMANTIC: 'off', ...settings },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const url = `http://127.0.0.1:${port}`;
    const server: ServerProcess = {
      child,
      pid: child.pid!,
      port,
      url,
      dir,
      output: () => out,
      stop: async () => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        const code = await exited;
        rmSync(dir, { recursive: true, force: true });
        if (running.includes(server)) running.splice(running.indexOf(server), 1);
        return code;
      },
    };
    running.push(server);
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && child.exitCode === null) {
      // This child's own URL in its log (another process may answer on a recycled port).
      if (out.includes(`"url":"${url}"`)) {
        try {
          const r = await request(`${url}/healthz`);
          await r.body.dump();
          if (r.statusCode === 200) return server;
        } catch {
          // not answering yet
        }
      }
      await sleep(50);
    }
    child.kill('SIGKILL');
    await server.stop();
    if (/EADDRINUSE/.test(out) && attempt < 5) continue; // the port was taken meanwhile
    throw new Error(`kura-server did not come up on port ${port}:\n${out}`);
  }
}

/** Stops every server still running (for afterAll). */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((s) => s.stop()));
}

/** A process's resident memory in bytes (VmRSS), 0 once it is gone. */
export function rssOf(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** How many sockets a process holds open (a connection it never let go of stays here). */
export function socketsOf(pid: number): number {
  let n = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:')) n++;
    } catch {
      // closed meanwhile
    }
  }
  return n;
}
