#!/usr/bin/env bash
# Runs kneighbor under every policy the library lists (LBOMP_POLICY=help), interleaved
# (A B C B C A C A B ...: turned by one place each repeat, as the first run of a block runs
# faster) so that machine drift hits them alike, and prints medians and ratios to none.
# Usage: bench/compare.sh [BUILD_DIR] [REPEATS] [extra kneighbor options...]
set -euo pipefail
build=${1:-build}
repeats=${2:-3}
shift 2 || shift $# || true
kn="$build/bench/kneighbor"
policies=$(LBOMP_POLICY=help "$kn" | awk '{print $1}')
opts=(--tasks 512 --load hotspot --iters 60 --period 10 --threads 2 "$@")
echo "kneighbor ${opts[*]}, $repeats interleaved repeats, policies: $(echo $policies)" >&2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
read -ra pols <<<"$(echo $policies)"
for r in $(seq "$repeats"); do
  k=$(( (r - 1) % ${#pols[@]} ))
  for p in "${pols[@]:k}" "${pols[@]:0:k}"; do
    printf '\r  repeat %s/%s: %-12s' "$r" "$repeats" "$p" >&2
    "$kn" "${opts[@]}" --policy "$p" --json | tail -n 1 >>"$out"
  done
done
printf '\r%60s\r' '' >&2
python3 - "$out" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by = {}
for r in rows: by.setdefault(r["policy"], []).append(r)
med = lambda xs: statistics.median(xs)
base = med([r["total_s"] for r in by["none"]]) if "none" in by else None
checks = {r["checksum"] for r in rows}
print("| policy | total s (median) | ratio to none | λ first | λ last | migrations | decision s | messages |")
print("|---|---|---|---|---|---|---|---|")
for p, rs in by.items():
    t = med([r["total_s"] for r in rs])
    print(f"| {p} | {t:.3f} | {t/base:.2f} | {med([r['imbalance_first'] for r in rs]):.3f} | "
          f"{med([r['imbalance_last'] for r in rs]):.3f} | {int(med([r['migrations'] for r in rs]))} | "
          f"{med([r['decision_s'] for r in rs]):.2e} | {int(med([r.get('messages', 0) for r in rs]))} |")
print(f"\nchecksums: {'all equal' if len(checks) == 1 else 'DIFFER: ' + str(sorted(checks))}")
sys.exit(0 if len(checks) == 1 else 1)
PY
