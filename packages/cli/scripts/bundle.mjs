/**
 * Bundles the `kura` command (dist/main.js, from tsc) into dist/bundle/ with rolldown: loading
 * ~215 ES modules (95 of them zod's) took ~0.2 s of every command here; one bundle loads in a
 * fraction of that (decision 0022). The worker threads of @kura/store are entries of their
 * own beside it, where the store looks for them (`./ingest-worker.js`,
 * `./checkpoint-worker.js`, `./checkpoint-write-worker.js`, `./extract-worker.js`, `./embed-worker.js`, `./grep-worker.js`, `./search-worker.js` next to its code), and kura_core.wasm is copied to where the core
 * looks for it (`../wasm/kura_core.wasm` from its code). Left outside: better-sqlite3 (native),
 * the text extractors (pdf.js finds its own worker module by its path) and @kura/server, which `kura serve` loads as it is (it finds the demo's files by its own
 * path).
 */
import { copyFileSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const cli = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(cli, 'package.json'));
const storeNode = dirname(require.resolve('@kura/store')); // its Node entry's folder: dist/node
const coreWasm = require.resolve('@kura/core/wasm/kura_core.wasm');
const out = join(cli, 'dist/bundle');

for (const needed of [join(cli, 'dist/main.js'), join(storeNode, 'ingest-worker.js'), coreWasm]) {
  if (!existsSync(needed)) throw new Error(`bundle: ${needed} is missing (build the packages first: scripts/build.sh)`);
}
rmSync(out, { recursive: true, force: true });
await build({
  input: {
    main: join(cli, 'dist/main.js'),
    'ingest-worker': join(storeNode, 'ingest-worker.js'),
    'checkpoint-worker': join(storeNode, 'checkpoint-worker.js'),
    'checkpoint-write-worker': join(storeNode, 'checkpoint-write-worker.js'),
    'extract-worker': join(storeNode, 'extract-worker.js'),
    'embed-worker': join(storeNode, 'embed-worker.js'),
    'grep-worker': join(storeNode, 'grep-worker.js'),
    'search-worker': join(storeNode, 'search-worker.js'),
  },
  platform: 'node',
  // The extractors stay packages of their own (dependencies of this one): pdf.js loads its
  // worker module by a path relative to itself, which a bundle would break.
  // onnxruntime-node and @parcel/watcher are native, like better-sqlite3.
  external: [/^node:/, 'better-sqlite3', 'onnxruntime-node', '@parcel/watcher', /^@kura\/server/, /^pdfjs-dist/, 'mammoth', 'html-to-text'],
  logLevel: 'warn',
  output: { dir: out, format: 'esm', entryFileNames: '[name].js', chunkFileNames: 'shared-[hash].js', sourcemap: true },
});
mkdirSync(join(out, '../wasm'), { recursive: true });
copyFileSync(coreWasm, join(out, '../wasm/kura_core.wasm'));
