#!/usr/bin/env bash
# side-by-side.sh — runs a test twice at a time, N rounds, and counts the runs that failed: how a
# test that judges measured times behaves on a loaded machine (bench/README, "Disturbed steps").
#
#   bash tools/side-by-side.sh BUILD ROUNDS TEST [ARGS...]
#   e.g. bash tools/side-by-side.sh build 20 test/e2e/test_loops skews
#
# Each round starts two copies of BUILD/TEST ARGS with OMP_NUM_THREADS=2 (unless set) and waits for
# both; the output of each failed run is kept in a temporary folder, named on the last line.
set -euo pipefail
[ $# -ge 3 ] || { sed -n '5,6p' "$0" | cut -c3- >&2; exit 2; }
build=$1 rounds=$2 test=$3
shift 3
bin=$build/$test
[ -x "$bin" ] || { echo "side-by-side.sh: $bin is not an executable (built?)" >&2; exit 2; }
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
out=$(mktemp -d)
failed=0
for ((r = 1; r <= rounds; r++)); do
  "$bin" "$@" >"$out/$r-a.log" 2>&1 & a=$!
  "$bin" "$@" >"$out/$r-b.log" 2>&1 & b=$!
  if wait "$a"; then rm -f "$out/$r-a.log"; else failed=$((failed + 1)); fi
  if wait "$b"; then rm -f "$out/$r-b.log"; else failed=$((failed + 1)); fi
done
if [ "$failed" -eq 0 ]; then
  rmdir "$out"
  echo "$test $*: 0 of $((2 * rounds)) runs failed"
else
  echo "$test $*: $failed of $((2 * rounds)) runs failed; their output: $out"
fi
