#!/usr/bin/env bash
# Runs every test suite (expects scripts/bootstrap.sh to have run: `npm test` does both):
# cargo test for wasm-core, vitest for the TypeScript packages. Ends with one line
# "N passed, N failed" summing all suites; exits non-zero when anything failed.
set -uo pipefail
source "$(dirname "$0")/lib/env.sh"
cd "$root"
out="$root/.ci-out"
mkdir -p "$out"
status=0

step "cargo test (wasm-core)"
(cd wasm-core && cargo test --quiet 2>&1) | tee "$out/cargo.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
read -r cargo_passed cargo_failed < <(awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } } END { print p + 0, f + 0 }' "$out/cargo.log")

step "vitest (packages, apps)"
rm -f "$out/vitest.json"
pnpm exec vitest run --reporter=default --reporter=json --outputFile.json="$out/vitest.json" || status=1
if [ -f "$out/vitest.json" ]; then
  read -r vitest_passed vitest_failed < <(node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    console.log(r.numPassedTests, r.numFailedTests + (r.numRuntimeErrors ?? 0) + r.numFailedTestSuites);
  ' "$out/vitest.json")
else
  vitest_passed=0 vitest_failed=1
fi

passed=$((cargo_passed + vitest_passed))
failed=$((cargo_failed + vitest_failed))
[ "$failed" -eq 0 ] || status=1
[ "$passed" -gt 0 ] || status=1
echo
echo "cargo:  $cargo_passed passed, $cargo_failed failed"
echo "vitest: $vitest_passed passed, $vitest_failed failed"
echo "$passed passed, $failed failed"
exit $status
