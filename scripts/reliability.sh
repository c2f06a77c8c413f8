#!/usr/bin/env bash
# `pnpm test:reliability`: the reliability tests at their long settings (crash loop, corruption
# trials, fault injection in the pack store and below SQLite, forged records and decompression
# bombs, HTTP fuzzing, cut and slow uploads, auth scopes, a load soak, crafted snapshot trees),
# then docs/RELIABILITY.md from the figures they recorded. Settings: KURA_CRASH_ITERATIONS
# (default 200), KURA_CORRUPTION_TRIALS (200), KURA_FUZZ_REQUESTS (3000),
# KURA_SQLITE_FAULT_POSITIONS (all), KURA_SOAK_SECONDS (60), KURA_ABORT_CONNECTIONS (300),
# KURA_WRITER_ROUNDS (10: rounds of 2, 4 and 8 writer processes killed at random moments),
# KURA_CRASH_POINT_ROUNDS (6: rounds per step of the commit protocol a writer is killed at),
# KURA_MULTI_OPS (2000: requests of the random workload three servers on one S3 bucket take).
# About 35 minutes here.
# Exits non-zero when a test failed or recorded nothing.
set -uo pipefail
source "$(dirname "$0")/lib/env.sh"
cd "$root"
export KURA_CRASH_ITERATIONS=${KURA_CRASH_ITERATIONS:-200}
export KURA_CORRUPTION_TRIALS=${KURA_CORRUPTION_TRIALS:-200}
export KURA_FUZZ_REQUESTS=${KURA_FUZZ_REQUESTS:-3000}
export KURA_SQLITE_FAULT_POSITIONS=${KURA_SQLITE_FAULT_POSITIONS:-all}
export KURA_SOAK_SECONDS=${KURA_SOAK_SECONDS:-60}
export KURA_ABORT_CONNECTIONS=${KURA_ABORT_CONNECTIONS:-300}
export KURA_WRITER_ROUNDS=${KURA_WRITER_ROUNDS:-10}
export KURA_CRASH_POINT_ROUNDS=${KURA_CRASH_POINT_ROUNDS:-6}
export KURA_MULTI_OPS=${KURA_MULTI_OPS:-2000}
export KURA_RELIABILITY_OUT="$root/test-output/reliability"
rm -rf "$KURA_RELIABILITY_OUT"
step "reliability tests (crash rounds $KURA_CRASH_ITERATIONS, corruption trials $KURA_CORRUPTION_TRIALS, fuzz requests $KURA_FUZZ_REQUESTS, SQLite fault positions $KURA_SQLITE_FAULT_POSITIONS, soak $KURA_SOAK_SECONDS s, cut uploads $KURA_ABORT_CONNECTIONS, writer rounds $KURA_WRITER_ROUNDS, crash point rounds $KURA_CRASH_POINT_ROUNDS, multi-server requests $KURA_MULTI_OPS)"
status=passed
# One file at a time: run side by side, the crash loops, the SQLite enumeration and the soak
# slowed each other past their time limits and skewed the soak's figures.
pnpm exec vitest run --no-file-parallelism packages/store/test/store-process.test.ts packages/store/test/store-writers.test.ts packages/store/test/store-crash-points.test.ts packages/store/test/store-corruption.test.ts \
  packages/store/test/store-snapshot.test.ts packages/store/test/store-faults.test.ts \
  packages/store/test/store-sqlite-faults.test.ts packages/store/test/store-forged.test.ts \
  apps/server/test/protocol.test.ts apps/server/test/hostile.test.ts apps/server/test/soak.test.ts \
  apps/server/test/auth-scopes.test.ts apps/server/test/multi-server-s3.test.ts packages/store/test/store-s3-crash-points.test.ts \
  -t 'agree on everything after a random workload|killed at each step|kill -9 during|killed at random moments|trials|crafted trees|never answers 5xx|each failing operation|every failing database|reader process refuses|cut, stalled, oversized|64 clients, mixed workload|403 to a token lacking|ever logged' \
  || status=failed
node scripts/reliability-report.mjs "$KURA_RELIABILITY_OUT" "$status"
