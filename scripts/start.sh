#!/usr/bin/env bash
# The main job (expects scripts/bootstrap.sh to have run: `npm start` does both). Until the
# server lands, it shows the core at work on a sample: digests and content-defined chunks.
set -euo pipefail
source "$(dirname "$0")/lib/env.sh"
cd "$root"
sample=${1:-"$root/../shared/test-vectors/SekienAkashita.jpg"}
[ -f "$sample" ] || sample="$root/README.md"
step "kura hash $sample"
pnpm exec kura hash "$sample"
pnpm exec kura hash --algo blake3 "$sample"
step "kura chunks $sample"
pnpm exec kura chunks "$sample"
