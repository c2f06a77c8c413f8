#!/usr/bin/env bash
# The main job (expects scripts/bootstrap.sh to have run: `npm start` does both): the Kura HTTP
# server with an embedded store in ./.kura on http://127.0.0.1:8787 — the API under /v1, its
# reference at /docs, and the browser demo at / once apps/web is built. Local use, so no
# authentication (the server says so in its log; run `kura serve` without --no-auth and with
# KURA_TOKENS to serve others). Ctrl-C or SIGTERM shuts it down cleanly.
# Overrides: KURA_STORE, KURA_HOST, KURA_PORT, KURA_LOG_LEVEL (docs/HTTP.md).
set -euo pipefail
source "$(dirname "$0")/lib/env.sh"
cd "$root"
step "kura serve: http://${KURA_HOST:-127.0.0.1}:${KURA_PORT:-8787}  (API reference at /docs)"
exec node packages/cli/bin/kura.js serve --no-auth "$@"
