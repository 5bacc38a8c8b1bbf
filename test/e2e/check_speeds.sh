#!/usr/bin/env bash
# Unequal cores in the simulator (README "Unequal cores"):
#  1. traces recorded by lbomp-sim before speeds existed (format version 1, test/data/trace-v1)
#     replay with --verify under every policy but smart: with every speed 1.0 each plan is the one
#     recorded, task for task (smart's second walk came after these were recorded, and changes its
#     plans where the first walk ended outside the threshold; test_speeds proves speeds 1.0 keep
#     every policy's plans, smart's included);
#  2. on the hybrid profile (8 P + 8 E cores, CPU kinds in the XML) every balancing policy's plan
#     with speeds is within 5 % (+ rounding) of the capacity-weighted ideal on lb_test-like loads,
#     and every speed-aware plan predicts a shorter step than the same policy's speed-blind plan;
#  3. --speeds 2,1 on 2 flat cores gives the same; --speeds with a bad list exits 2.
set -euo pipefail
sim=$1 profiles=$2 traces=$3
tmp=$(mktemp -d /tmp/lbomp-check-speeds-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
n=0
for f in "$traces"/*.trc; do
  "$sim" --trace "$f" --policy none,greedy,refine,hierarchical,packdrop,distributed,greedy-refine,greedy-comm --verify --json > "$tmp/replay.json"
  n=$((n + $(wc -l < "$tmp/replay.json")))
done
echo "version-1 traces: $n replayed plans, every recorded plan reproduced"

for load in lbtest linear hotspot; do
  "$sim" --profile "$profiles/intel-i9-12900k-hybrid.xml" --tasks 3000 --load $load \
    --policy all --json > "$tmp/hybrid-$load.json"
done
"$sim" --cores 2 --speeds 2,1 --tasks 400 --load lbtest --policy all --json > "$tmp/two.json"
python3 - "$tmp"/hybrid-*.json "$tmp/two.json" <<'PY'
import json, sys
err = []
for f in sys.argv[1:]:
    for l in open(f):
        d = json.loads(l)
        p = d["policy"]
        if "step_s" not in d:
            err.append(f"{f}: {p}: no step_s (speeds not seen)")
            continue
        r, b = d["step_over_ideal"], d["blind_over_ideal"]
        print(f"{d['topology']:28s} {d['load']:8s} {p:13s} speed-aware {r:.4f} x ideal, speed-blind {b:.4f} x ideal")
        if p == "none":
            continue
        if r > 1.05 + 1e-6:
            err.append(f"{f}: {p}: step {r:.4f} x the ideal")
        if not d["step_s"] < d["blind_step_s"]:
            err.append(f"{f}: {p}: speed-aware step {d['step_s']} not below speed-blind {d['blind_step_s']}")
print("ok" if not err else "FAIL: " + "; ".join(err))
sys.exit(1 if err else 0)
PY
set +e
msg=$("$sim" --cores 2 --speeds 2,x --tasks 10 2>&1)
rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q -- "--speeds" <<<"$msg" || { echo "FAIL: --speeds 2,x: rc $rc: $msg"; exit 1; }
echo "check_speeds: ok"
