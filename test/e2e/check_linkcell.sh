#!/usr/bin/env bash
# check_linkcell.sh — the linkcell benchmark (bench/linkcell) in all its forms gives one checksum:
# plain OpenMP with three schedules, LBOMP_FOR and the task form, each with 1 and 3 threads, and
# LBOMP_FOR with stealing; every cell ran exactly once per loop and step; the JSON names the form
# and, under lbomp, the chunks of both loops.
# Usage: check_linkcell.sh LINKCELL
set -euo pipefail
bin=$1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for threads in 1 3; do
  for v in "--baseline omp-static" "--baseline omp-dynamic" "--baseline omp-guided" "--form for" \
    "--form tasks"; do
    # shellcheck disable=SC2086
    "$bin" --size tiny --iters 12 --period 2 --threads $threads --json $v >>"$out"
  done
done
LBOMP_STEAL=all "$bin" --size tiny --iters 12 --period 2 --threads 3 --json --form for >>"$out"
python3 - "$out" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert len(rows) == 11, f"{len(rows)} results, expected 11"
sums = {r["checksum"] for r in rows}
if len(sums) != 1:
    sys.exit(f"FAIL: checksums differ: {sorted(sums)}")
for r in rows:
    if not r["exactly_once"]:
        sys.exit(f"FAIL: a cell did not run exactly once: {r}")
    if r["form"] == "for" and not (r["chunks_force"] > 0 and r["chunks_integrate"] > 0 and r["lb_steps"] > 0):
        sys.exit(f"FAIL: LBOMP_FOR without chunks or LB steps: {r}")
print(f"ok: {len(rows)} runs, one checksum {sums.pop()}")
PY
