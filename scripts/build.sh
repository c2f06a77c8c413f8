#!/usr/bin/env bash
# Builds everything: the wasm core, then the TypeScript packages in dependency order, the CLI
# bundle and the browser demo. A step whose outputs are newer than all of its inputs (its
# sources, its configuration, the lockfile and the steps it builds on) is skipped, so a second
# `npm start` or `npm test` serves in seconds (cargo is incremental by itself).
#   --dry-run   only say which steps would run and which are up to date (exit 0)
#   --force     build every step
set -euo pipefail
source "$(dirname "$0")/lib/env.sh"
cd "$root"
dry=0
force=0
for arg in "$@"; do
  case "$arg" in
    --dry-run) dry=1 ;;
    --force) force=1 ;;
    *) echo "build.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done

# up_to_date STAMP OUTPUT INPUT...: the stamp and the output exist and no input (file or
# directory, searched recursively) is newer than the stamp. Stamps live in .build-stamps/
# (git-ignored), never in an output directory that is published (dist/ is packed).
up_to_date() {
  local stamp=$1 output=$2
  shift 2
  [ "$force" -eq 0 ] && [ -f "$stamp" ] && [ -e "$output" ] && [ -z "$(find "$@" -newer "$stamp" -print -quit 2>/dev/null)" ]
}

# Stamps of steps a dry run would build: the steps on top of them would build too.
pending=" "

# build NAME OUTPUT "INPUT..." COMMAND...: runs COMMAND unless up to date, then touches the
# step's stamp.
build() {
  local name=$1 output=$2 inputs=$3 input waits=0
  local stamp
  stamp=$(stamp "$output")
  shift 3
  for input in $inputs; do [[ "$pending" == *" $input "* ]] && waits=1; done
  # shellcheck disable=SC2086 # the inputs are a list of paths without spaces
  if [ "$waits" -eq 0 ] && up_to_date "$stamp" "$output" $inputs; then
    echo "up to date: $name"
    return
  fi
  if [ "$dry" -eq 1 ]; then
    echo "would build: $name"
    pending+="$stamp "
    return
  fi
  step "build $name"
  "$@"
  mkdir -p "$(dirname "$stamp")"
  touch "$stamp"
}

if [ "$dry" -eq 0 ]; then
  step "build wasm-core -> packages/core/wasm"
  bash scripts/build-wasm.sh
fi

common="pnpm-lock.yaml tsconfig.base.json"
wasm=packages/core/wasm/kura_core.wasm
# The stamp of the step that writes OUTPUT (a directory).
stamp() { echo ".build-stamps/${1//\//_}"; }
# cli imports apps/server (for `kura serve`), so the server builds before it.
build packages/core packages/core/dist "$common packages/core/src packages/core/tsconfig.json packages/core/package.json" \
  bash -c 'cd packages/core && pnpm exec tsc -p tsconfig.json'
build packages/store packages/store/dist "$common packages/store/src packages/store/tsconfig.json packages/store/package.json $(stamp packages/core/dist)" \
  bash -c 'cd packages/store && pnpm exec tsc -p tsconfig.json'
build apps/server apps/server/dist "$common apps/server/src apps/server/tsconfig.json apps/server/package.json $(stamp packages/store/dist)" \
  bash -c 'cd apps/server && pnpm exec tsc -p tsconfig.json'
build packages/cli packages/cli/dist "$common packages/cli/src packages/cli/tsconfig.json packages/cli/package.json $(stamp apps/server/dist)" \
  bash -c 'cd packages/cli && pnpm exec tsc -p tsconfig.json'
build "the kura command bundle -> packages/cli/dist/bundle" packages/cli/dist/bundle "packages/cli/scripts $wasm $(stamp packages/cli/dist)" \
  bash -c 'cd packages/cli && node scripts/bundle.mjs'
# Type-checked, then bundled by Vite; the server serves apps/web/dist at /.
build "the browser demo -> apps/web/dist" apps/web/dist "$common apps/web/src apps/web/index.html apps/web/bench.html apps/web/vite.config.ts apps/web/tsconfig.json apps/web/package.json $wasm $(stamp packages/store/dist)" \
  bash -c 'cd apps/web && pnpm exec tsc -p tsconfig.json && pnpm exec vite build --logLevel warn'
