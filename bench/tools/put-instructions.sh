#!/usr/bin/env bash
# Instructions per 1 KB put (32 in flight), all threads, counted by cachegrind: the put loop
# runs at two sizes and the difference is divided by the extra puts, so start-up and
# compilation cancel out. Immune to this machine's 1.5-2x swings in speed (a timed run is
# not) within ~5% (group commits and what V8 compiles when still follow timing): run each
# build two or three times. Usage, from a tree's bench/: bash tools/put-instructions.sh [A B]
# Needs valgrind (apt-get install -y valgrind); takes a few minutes (valgrind runs ~50x slower).
set -euo pipefail
cd "$(dirname "$0")/.."
a=${1:-4000}; b=${2:-10000}
count() {
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null --smc-check=all-non-file \
    node tools/put-loop.mjs "$1" 2>&1 | awk '/I *refs:/ { gsub(",", "", $NF); print $NF }'
}
ia=$(count "$a") ib=$(count "$b")
echo "$(( (ib - ia) / (b - a) )) instructions per put ($a: $ia, $b: $ib)"
