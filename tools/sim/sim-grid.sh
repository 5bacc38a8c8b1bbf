#!/usr/bin/env bash
# sim-grid.sh — the quality-at-scale grid of the "at scale" issue: lbomp-sim runs every policy for
# three consecutive LB steps (--steps 3) on the loads linear, hotspot, lbtest and lbtest-iid, at
# 256, 1,024, 4,096 and 16,384 workers (flat machine, default ring:2 links), with 2, 8 and 64
# tasks per worker and seeds 1-3, and prints, per policy, load, workers and tasks per worker, the
# lowest efficiency (bound / max load) over the seeds after one and after three LB steps, checks
# the floors (one step: greedy, hierarchical 0.95, refine 0.93, packdrop, distributed 0.85; three
# steps: refine, packdrop, distributed 0.93) and that no LB step ends with a higher λ than it
# began, and writes everything to bench/results/sim-grid.jsonl and sim-grid.txt.
#
#   tools/sim/sim-grid.sh [BUILD_DIR] [--quick]     (default build; --quick: 256 and 1,024 only)
#
# Exit 1 when a floor or the never-worse rule fails. Runs two lbomp-sim at a time.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=build
quick=0
for a in "$@"; do
  case $a in
    --quick) quick=1 ;;
    *) build=$a ;;
  esac
done
[ -d "$build" ] || build=$root/$build
sim=$build/tools/lbomp-sim
[ -x "$sim" ] || { echo "sim-grid: $sim is missing: build first" >&2; exit 2; }
out=${SIM_GRID_OUT:-$root/bench/results}
mkdir -p "$out"
jsonl=$out/sim-grid.jsonl
workers=(256 1024 4096 16384)
[ "$quick" = 1 ] && workers=(256 1024)
seeds=(1 2 3)
tmp=$(mktemp -d /tmp/lbomp-sim-grid-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

SECONDS=0
jobs=()
for P in "${workers[@]}"; do
  for tpw in 2 8 64; do
    for load in linear hotspot lbtest lbtest-iid; do
      for seed in "${seeds[@]}"; do
        jobs+=("$P $tpw $load $seed")
      done
    done
  done
done
run() {
  set -- $1
  "$sim" --cores "$1" --tasks $(($1 * $2)) --load "$3" --seed "$4" --policy all --steps 3 \
    --json > "$tmp/$1-$2-$3-$4.jsonl"
}
export -f run
export sim tmp
printf '%s\n' "${jobs[@]}" | xargs -P 2 -I{} bash -c 'run "{}"'
cat "$tmp"/*.jsonl > "$jsonl"
elapsed=$SECONDS

python3 - "$jsonl" "$elapsed" <<'PY' | tee "$out/sim-grid.txt"
import collections, json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
floor1 = {"greedy": 0.95, "hierarchical": 0.95, "refine": 0.93, "packdrop": 0.85,
          "distributed": 0.85}
floor3 = {"refine": 0.93, "packdrop": 0.93, "distributed": 0.93}
eff = collections.defaultdict(dict)   # (policy, load, P, tpw) -> {(seed, step): eff}
worse, fails = [], []
for d in rows:
    key = (d["policy"], d["load"], d["cores"], d["tasks"] // d["cores"])
    eff[key][(d["seed"], d["lb_step"])] = d["efficiency"]
    if d["error"] is not None:
        fails.append(f"{key} step {d['lb_step']}: error {d['error']}")
    if d["imbalance_after"] > d["imbalance_before"] * (1 + 1e-9):
        worse.append(f"{key} step {d['lb_step']}: λ {d['imbalance_before']:.4f} -> {d['imbalance_after']:.4f}")
policies = []
for d in rows:
    if d["policy"] not in policies:
        policies.append(d["policy"])
loads = ["linear", "hotspot", "lbtest", "lbtest-iid"]
Ps = sorted({k[2] for k in eff})
tpws = sorted({k[3] for k in eff})
rejected = sum(1 for d in rows if d.get("plan_rejected"))
print(f"sim-grid: {len(rows)} LB steps in {sys.argv[2]} s; lowest efficiency over seeds "
      f"{sorted({d['seed'] for d in rows})} (L* / max load) after LB step 1 | after LB step 3")
print(f"{'policy':13} {'load':11}" + "".join(f" {f'P={P}':>17}" for P in Ps))
print(f"{'':13} {'tasks/worker':11}" + "".join(" " + " ".join(f"{t:>5}" for t in tpws) for P in Ps))
for pol in policies:
    for load in loads:
        one, three = [], []
        for P in Ps:
            a, b = [], []
            for t in tpws:
                e = eff.get((pol, load, P, t), {})
                e1 = [v for (s, k), v in e.items() if k == 0]
                e3 = [v for (s, k), v in e.items() if k == 2]
                m1 = min(e1) if e1 else None
                m3 = min(e3) if e3 else None
                a.append(f"{m1:5.3f}" if m1 is not None else "    -")
                b.append(f"{m3:5.3f}" if m3 is not None else "    -")
                if m1 is not None and m1 < floor1.get(pol, 0) - 1e-9:
                    fails.append(f"{pol} {load} P={P} {t}/worker: step 1 efficiency {m1:.3f} < {floor1[pol]}")
                if m3 is not None and m3 < floor3.get(pol, 0) - 1e-9:
                    fails.append(f"{pol} {load} P={P} {t}/worker: step 3 efficiency {m3:.3f} < {floor3[pol]}")
            one.append(" ".join(a))
            three.append(" ".join(b))
        print(f"{pol:13} {load:11} " + " ".join(f"{x:>17}" for x in one))
        print(f"{'':13} {'  3 steps':11} " + " ".join(f"{x:>17}" for x in three))
print(f"plans refused by the never-worse check: {rejected}")
for w in worse:
    print("WORSE: " + w)
for f in fails:
    print("FAIL: " + f)
print("ok" if not worse and not fails else f"{len(worse)} worse, {len(fails)} below a floor")
sys.exit(1 if worse or fails else 0)
PY
