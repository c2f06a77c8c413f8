#!/usr/bin/env bash
# Builds wasm-core to WebAssembly (release, SIMD128) and installs it as
# packages/core/wasm/kura_core.wasm. Fails on any error; skips the copy when unchanged.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root/wasm-core"
# SIMD128: sha2 0.11 picks its wasm SIMD backend from this flag; blake3 needs its
# wasm32_simd feature as well (Cargo.toml). Node 20 and current Chromium run SIMD128.
RUSTFLAGS='-C target-feature=+simd128' cargo build --quiet --release --target wasm32-unknown-unknown
out="$root/packages/core/wasm"
mkdir -p "$out"
src="target/wasm32-unknown-unknown/release/kura_core.wasm"
if ! cmp -s "$src" "$out/kura_core.wasm"; then
  cp "$src" "$out/kura_core.wasm.tmp" && mv "$out/kura_core.wasm.tmp" "$out/kura_core.wasm"
fi
echo "wasm: $(wc -c < "$out/kura_core.wasm") bytes -> packages/core/wasm/kura_core.wasm"
