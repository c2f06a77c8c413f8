/** `kura serve` as a real process on a free loopback port, for the CLI tests. */
import { spawn, type ChildProcess } from 'node:child_process';

/**
 * Starts `node BIN --store STORE serve --no-auth --port 0 …extra` (without `--no-auth` when
 * `auth`) and resolves with the process and the URL it printed (its JSON log's "url");
 * rejects, with its output, if it exits first.
 */
export async function startServe(bin: string, store: string, extra: string[] = [], options: { auth?: boolean } = {}): Promise<{ server: ChildProcess; url: string; log: () => string }> {
  const server = spawn(process.execPath, [bin, '--store', store, 'serve', ...(options.auth ? [] : ['--no-auth']), '--port', '0', ...extra], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, KURA_SEMANTIC: process.env.KURA_SEMANTIC ?? 'off' }, // (--semantic in `extra` wins)
  });
  let log = '';
  const url = await new Promise<string>((resolve, reject) => {
    server.stdout!.on('data', (d: Buffer) => {
      log += d.toString();
      const m = /"url":"(http:\/\/[^"]+)"/.exec(log);
      if (m) resolve(m[1]!);
    });
    server.once('exit', (code) => reject(new Error(`kura serve exited (${code}): ${log}`)));
  }).catch((e: unknown) => {
    server.kill('SIGKILL');
    throw e;
  });
  return { server, url, log: () => log };
}
