/**
 * The npm packages as their users get them: @kura/core, @kura/store, @kura/server and
 * @kura/cli packed (`pnpm pack`), installed with plain npm from the tarballs into new projects
 * outside the workspace (their other dependencies from the registry), and used there:
 * - a Node project: put/get/list/search from a script, the server's build() answering a
 *   request, `npx kura` init/add/ls/get, and its TypeScript (`tsc --noEmit`) against the
 *   packages' own types;
 * - a Vite project with @kura/core and @kura/store: built, served, and run in Chromium, where
 *   a worker stores a file in OPFS and reads it back — the wasm modules and the store must
 *   resolve from the installed packages, not from the workspace.
 * Slow (npm installs, better-sqlite3 compiled from source, a Vite build): ~2-3 minutes.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createReadStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PACKAGES = ['packages/core', 'packages/store', 'apps/server', 'packages/cli'];
const tmp = mkdtempSync(join(tmpdir(), 'kura-npm-'));
const tarballs: Record<string, string> = {};
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Runs a command; fails the test with its output when it fails. */
function run(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}): string {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', env: { ...process.env, ...env }, maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** npm, as a user runs it (no workspace, the registry for everything but our tarballs). */
function npm(args: string[], cwd: string): string {
  // better-sqlite3 has no prebuilt binary for this platform here: node-gyp builds it against
  // Node's headers (TOOLCHAIN.md), which it finds through npm_config_nodedir.
  return run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], cwd, { npm_config_nodedir: '/usr' });
}

function project(name: string, pkg: Record<string, unknown>): string {
  const dir = join(tmp, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', private: true, type: 'module', ...pkg }, null, 2));
  return dir;
}

beforeAll(() => {
  const out = join(tmp, 'tarballs');
  mkdirSync(out);
  for (const p of PACKAGES) {
    const name = JSON.parse(readFileSync(join(ROOT, p, 'package.json'), 'utf8')).name as string;
    const before = new Set(readdirSync(out));
    run('pnpm', ['pack', '--pack-destination', out], join(ROOT, p));
    tarballs[name] = join(out, readdirSync(out).find((f) => !before.has(f))!);
  }
}, 120_000);

describe('the npm packages, installed from their tarballs', () => {
  it('each says what it is: README with an example, license, engines; types and files that exist', () => {
    for (const p of PACKAGES) {
      const pkg = JSON.parse(readFileSync(join(ROOT, p, 'package.json'), 'utf8'));
      const files = execFileSync('tar', ['tzf', tarballs[pkg.name]!], { encoding: 'utf8' }).split('\n');
      expect(files, pkg.name).toContain('package/README.md');
      expect(readFileSync(join(ROOT, p, 'README.md'), 'utf8'), pkg.name).toMatch(/```(ts|sh|console)\n[\s\S]*?```/);
      expect(pkg.license, pkg.name).toBe('MIT');
      expect(pkg.engines?.node, pkg.name).toBe('>=20');
      expect(pkg.private, pkg.name).toBeUndefined();
      // Every file the package's exports and bin name is in the tarball.
      const named = [...JSON.stringify(pkg.exports ?? {}).matchAll(/"(\.\/[^"*]+)"/g)].map((m) => m[1]!).filter((f) => /\.(js|ts|wasm)$/.test(f));
      for (const f of [...named, ...Object.values((pkg.bin ?? {}) as Record<string, string>)]) expect(files, `${pkg.name}: ${f}`).toContain(`package/${f.replace(/^\.\//, '')}`);
      expect(files.some((f) => /\.build-stamp|\/\.built$|\.test\.|\/src\//.test(f)), `${pkg.name} packs no build stamps, tests or sources`).toBe(false);
    }
  });

  it('in a Node project: a script puts, gets, lists and searches; build() answers; npx kura works; types check', { timeout: 600_000 }, () => {
    const dir = project('node-app', {
      dependencies: Object.fromEntries(Object.entries(tarballs).map(([name, file]) => [name, `file:${file}`])),
      // npm 11 runs a dependency's install script only when the project allows it.
      allowScripts: { 'better-sqlite3': true },
    });
    npm(['install'], dir);
    npm(['install', '@types/node@20'], dir);
    writeFileSync(
      join(dir, 'use.mjs'),
      `import { Store } from '@kura/store';
import { build } from '@kura/server';
const dir = process.argv[2];
const store = await Store.init(dir);
const { digest } = await store.put(new TextEncoder().encode('harbour notes from a consumer'), { path: 'notes/a.md', tags: ['t'] });
const back = new TextDecoder().decode(await store.getBytes(digest));
const listed = (await store.list()).items.map((e) => e.path);
const hits = (await store.search('harbour')).map((h) => h.path);
await store.close();
const app = await build({ config: { store: dir, noAuth: true, logLevel: 'silent' } });
const res = await app.inject({ method: 'GET', url: '/v1/stats' });
await app.close();
console.log(JSON.stringify({ back, listed, hits, status: res.statusCode, entries: res.json().entries }));
`,
    );
    const used = JSON.parse(run(process.execPath, ['use.mjs', join(dir, 'store')], dir));
    expect(used).toEqual({ back: 'harbour notes from a consumer', listed: ['notes/a.md'], hits: ['notes/a.md'], status: 200, entries: 1 });

    const kura = (...args: string[]) => run('npx', ['--no-install', 'kura', '--store', join(dir, 'cli-store'), ...args], dir);
    writeFileSync(join(dir, 'hello.txt'), 'hello from npx kura\n');
    kura('init');
    expect(kura('add', 'hello.txt')).toMatch(/^sha256:[0-9a-f]{64} {2}hello\.txt/);
    expect(kura('ls')).toMatch(/ hello\.txt\n$/);
    expect(kura('get', 'hello.txt')).toBe('hello from npx kura\n');

    // The packages' types, as a consumer's compiler sees them (skipLibCheck off: ours are checked).
    writeFileSync(
      join(dir, 'use.ts'),
      `import { Store, type EntryInfo, type PutResult } from '@kura/store';
import { sha256, type Digest } from '@kura/core';
import { build } from '@kura/server';
const store: Store = await Store.init('x');
const r: PutResult = await store.put(new Uint8Array([1, 2, 3]), { path: 'a' });
const info: EntryInfo = await store.stat('a');
const d: Digest = sha256(new Uint8Array([1]));
const app = await build({ config: { store: 'x', noAuth: true } });
console.log(r.digest, info.path, d, app.server.listening);
`,
    );
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: false, types: ['node'] }, files: ['use.ts'] }),
    );
    run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], dir);
  });

  it('in a Vite project: built, and run in Chromium, a worker stores a file in OPFS and reads it back', { timeout: 600_000 }, async () => {
    const vite = JSON.parse(readFileSync(join(ROOT, 'apps/web/node_modules/vite/package.json'), 'utf8')).version as string;
    const dir = project('web-app', {
      dependencies: { '@kura/core': `file:${tarballs['@kura/core']}`, '@kura/store': `file:${tarballs['@kura/store']}` },
      devDependencies: { vite },
    });
    npm(['install'], dir); // (better-sqlite3's install script is not allowed here: a browser app never loads it)
    writeFileSync(
      join(dir, 'vite.config.js'),
      `export default { worker: { format: 'es' }, build: { target: 'es2022' }, optimizeDeps: { exclude: ['@sqlite.org/sqlite-wasm', '@kura/core'] } };\n`,
    );
    writeFileSync(join(dir, 'index.html'), '<!doctype html><html><body><script type="module" src="/main.js"></script></body></html>\n');
    writeFileSync(
      join(dir, 'main.js'),
      `const worker = new Worker(new URL('./store.worker.js', import.meta.url), { type: 'module' });
worker.onmessage = (e) => { document.body.dataset.result = JSON.stringify(e.data); };
worker.onerror = (e) => { document.body.dataset.result = JSON.stringify({ error: e.message }); };
`,
    );
    writeFileSync(
      join(dir, 'store.worker.js'),
      `import { BrowserStore } from '@kura/store/browser';
import { sha256 } from '@kura/core';
try {
  const store = await BrowserStore.openOpfs('consumer');
  const bytes = new TextEncoder().encode('a file stored by a Vite app in OPFS');
  const { digest } = await store.put(bytes, { path: 'notes/vite.txt' });
  const back = new TextDecoder().decode(await store.getBytes(digest));
  const listed = (await store.list()).items.map((e) => e.path);
  await store.close();
  postMessage({ digest, expected: sha256(bytes), back, listed });
} catch (e) {
  postMessage({ error: String(e && e.stack || e) });
}
`,
    );
    run(process.execPath, [join(dir, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn'], dir);
    const dist = join(dir, 'dist');
    // The wasm modules were emitted from the installed packages.
    const assets = readdirSync(join(dist, 'assets'));
    expect(assets.filter((f) => f.endsWith('.wasm')).length).toBeGreaterThanOrEqual(2); // kura_core and sqlite3
    const server = await serveStatic(dist);
    const browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    try {
      const page = await browser.newPage();
      await page.goto(`http://127.0.0.1:${(server.address() as { port: number }).port}/`);
      await page.waitForFunction(() => document.body.dataset.result, null, { timeout: 60_000 });
      const result = JSON.parse((await page.evaluate(() => document.body.dataset.result))!);
      expect(result.error).toBeUndefined();
      expect(result).toMatchObject({ back: 'a file stored by a Vite app in OPFS', listed: ['notes/vite.txt'] });
      expect(result.digest).toBe(result.expected);
    } finally {
      await browser.close();
      server.close();
    }
  });
});

const TYPES: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css' };

/** A static file server on 127.0.0.1 for a built site. */
function serveStatic(root: string): Promise<Server> {
  const server = createServer((req, res) => {
    const path = join(root, decodeURIComponent(new URL(req.url!, 'http://x').pathname).replace(/^\/$/, '/index.html'));
    if (!path.startsWith(root) || !existsSync(path) || !statSync(path).isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[extname(path)] ?? 'application/octet-stream' });
    createReadStream(path).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}
