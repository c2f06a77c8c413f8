#!/usr/bin/env bash
# `pnpm test:reliability`: the reliability tests at their long settings (crash loop, corruption
# trials, pack-store fault injection, HTTP fuzzing, crafted snapshot trees), then docs/RELIABILITY.md from the figures they
# recorded. Settings: KURA_CRASH_ITERATIONS (default 200), KURA_CORRUPTION_TRIALS (200),
# KURA_FUZZ_REQUESTS (3000). Exits non-zero when a test failed or recorded nothing.
set -uo pipefail
source "$(dirname "$0")/lib/env.sh"
cd "$root"
export KURA_CRASH_ITERATIONS=${KURA_CRASH_ITERATIONS:-200}
export KURA_CORRUPTION_TRIALS=${KURA_CORRUPTION_TRIALS:-200}
export KURA_FUZZ_REQUESTS=${KURA_FUZZ_REQUESTS:-3000}
export KURA_RELIABILITY_OUT="$root/test-output/reliability"
rm -rf "$KURA_RELIABILITY_OUT"
step "reliability tests (crash rounds $KURA_CRASH_ITERATIONS, corruption trials $KURA_CORRUPTION_TRIALS, fuzz requests $KURA_FUZZ_REQUESTS)"
status=passed
pnpm exec vitest run packages/store/test/store-process.test.ts packages/store/test/store-corruption.test.ts \
  packages/store/test/store-snapshot.test.ts packages/store/test/store-faults.test.ts apps/server/test/protocol.test.ts \
  -t 'kill -9 during|trials|crafted trees|never answers 5xx|each failing operation' || status=failed
node scripts/reliability-report.mjs "$KURA_RELIABILITY_OUT" "$status"
