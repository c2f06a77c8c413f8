#!/usr/bin/env bash
# Builds everything: the wasm core, then the TypeScript packages in dependency order.
set -euo pipefail
source "$(dirname "$0")/lib/env.sh"
cd "$root"
step "build wasm-core -> packages/core/wasm"
bash scripts/build-wasm.sh
step "build TypeScript packages"
# cli imports apps/server (for `kura serve`), so the server builds before it.
for pkg in packages/core packages/store apps/server packages/cli; do
  (cd "$pkg" && pnpm exec tsc -p tsconfig.json)
done
step "bundle the kura command -> packages/cli/dist/bundle"
(cd packages/cli && node scripts/bundle.mjs)
step "build the browser demo -> apps/web/dist"
# Type-checked, then bundled by Vite; the server serves apps/web/dist at /.
(cd apps/web && pnpm exec tsc -p tsconfig.json && pnpm exec vite build --logLevel warn)
