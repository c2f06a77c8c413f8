/**
 * Browser (and worker) entry point: fetches and compiles kura_core.wasm with top-level await,
 * so importing the module yields a ready, synchronous API, like the Node entry. Bundlers
 * (Vite) resolve `new URL(..., import.meta.url)` to the emitted asset.
 */
import { setWasm } from './wasm/instance.js';

export * from './api.js';

const WASM_URL = new URL('../wasm/kura_core.wasm', import.meta.url);

async function load(): Promise<void> {
  const response = await fetch(WASM_URL);
  if (!response.ok) throw new Error(`@kura/core: fetching ${WASM_URL.href} failed with HTTP ${response.status}`);
  let instance: WebAssembly.Instance;
  if (response.headers.get('content-type')?.startsWith('application/wasm')) {
    ({ instance } = await WebAssembly.instantiateStreaming(response, {}));
  } else {
    // Servers that send another type defeat streaming compilation; compile from bytes.
    ({ instance } = await WebAssembly.instantiate(await response.arrayBuffer(), {}));
  }
  setWasm(instance);
}

await load();
