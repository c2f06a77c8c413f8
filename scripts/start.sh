#!/usr/bin/env bash
# The main job (expects scripts/bootstrap.sh to have run: `npm start` does both). Until the
# server lands, it shows Kura at work on sample files: digests, content-defined chunks, and a
# store in a temporary directory (add, dedup on re-add, stats, verify).
set -euo pipefail
source "$(dirname "$0")/lib/env.sh"
cd "$root"
sample=${1:-"$root/../shared/test-vectors/SekienAkashita.jpg"}
[ -f "$sample" ] || sample="$root/README.md"
kura() { pnpm exec kura "$@"; }
step "kura hash $sample"
kura hash "$sample"
step "kura chunks $sample"
kura chunks "$sample"
store=$(mktemp -d)/.kura
trap 'rm -rf "$(dirname "$store")"' EXIT
step "a store in $store"
kura init --store "$store"
kura add --store "$store" --tag sample "$sample" "$root/docs"
step "adding the same files again stores nothing new"
kura add --store "$store" "$sample" "$root/docs"
kura stats --store "$store"
kura verify --store "$store"
