#!/usr/bin/env bash
# sim-grid.sh — the quality-at-scale grid: lbomp-sim runs every policy for three consecutive LB
# steps (--steps 3, each from the mapping the previous one applied) on the loads linear, hotspot,
# lbtest and lbtest-iid, on a flat machine (default ring:2 links), and prints per policy, load,
# workers and tasks per worker the lowest efficiency (L* / max load) over the seeds after one and
# after three LB steps. It checks that no LB step ends with a higher λ than it began (never worse)
# and the floors: after one step greedy and hierarchical 0.95, refine 0.93, packdrop and
# distributed 0.85; after three steps refine, packdrop and distributed 0.93.
#
#   tools/sim/sim-grid.sh [--sim PATH] [--out DIR] [--quick] [--plot] [--from JSONL]
#
# Full grid: 256, 1,024, 4,096 and 16,384 workers, 2, 8 and 64 tasks per worker, seeds 1-3
# (bench/README.md, "Scaling"; about an hour on the 2-core development machine). --quick: 256
# and 1,024 workers, 2 and 8 tasks per worker, seeds 1-2 (the CI property test, sim_grid; well
# under a minute). PATH defaults to build/tools/lbomp-sim, DIR to bench/results (sim-grid.jsonl,
# sim-grid.txt). --plot (gnuplot): sim-grid.png, efficiency after one and three LB steps (lowest over
# loads, tasks per worker and seeds) and decision span and time (lbtest, 64 tasks per worker)
# against workers, one line per policy. Exit 1 when a floor or the never-worse rule fails. Runs
# two lbomp-sim at a time. --from: no run, the table (and plot) of a previous run's JSON lines.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
sim=$root/build/tools/lbomp-sim
out=$root/bench/results
quick=0
plot=0
from=
while [ $# -gt 0 ]; do
  case $1 in
    --quick) quick=1 ;;
    --plot) plot=1 ;;
    --from) from=$2; shift ;;
    --sim) sim=$2; shift ;;
    --out) out=$2; shift ;;
    *) echo "sim-grid: unknown argument '$1' (--sim PATH, --out DIR, --quick, --plot, --from F)" >&2
       exit 2 ;;
  esac
  shift
done
[ -n "$from" ] || [ -x "$sim" ] || { echo "sim-grid: $sim is missing: build first" >&2; exit 2; }
mkdir -p "$out"
name=sim-grid
workers=(256 1024 4096 16384)
tpws=(2 8 64)
seeds=(1 2 3)
if [ "$quick" = 1 ]; then
  name=sim-grid-quick
  workers=(256 1024)
  tpws=(2 8)
  seeds=(1 2)
fi
jsonl=$out/$name.jsonl
tmp=$(mktemp -d /tmp/lbomp-sim-grid-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

SECONDS=0
if [ -n "$from" ]; then
  jsonl=$from
  name=$(basename "$from" .jsonl)
else
jobs=()
for P in "${workers[@]}"; do
  for tpw in "${tpws[@]}"; do
    for load in linear hotspot lbtest lbtest-iid; do
      for seed in "${seeds[@]}"; do
        jobs+=("$P $tpw $load $seed")
      done
    done
  done
done
run() {
  set -- $1
  "$SIM" --cores "$1" --tasks $(($1 * $2)) --load "$3" --seed "$4" --policy all --steps 3 \
    --json | sed "s/^{/{\"grid_seed\":$4,/" > "$TMP/$1-$2-$3-$4.jsonl"
}
export -f run
export SIM=$sim TMP=$tmp
printf '%s\n' "${jobs[@]}" | xargs -P 2 -I{} bash -c 'run "{}"'
cat "$tmp"/*.jsonl > "$jsonl"
fi
elapsed=$SECONDS

status=0
python3 - "$jsonl" "$elapsed" <<'PY' | tee "$out/$name.txt" || status=$?
import collections, json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
floor1 = {"greedy": 0.95, "hierarchical": 0.95, "refine": 0.93, "packdrop": 0.85,
          "distributed": 0.85}
floor3 = {"refine": 0.93, "packdrop": 0.93, "distributed": 0.93}
eff = collections.defaultdict(dict)   # (policy, load, P, tpw) -> {(seed, step): efficiency}
worse, fails = [], []
for d in rows:
    key = (d["policy"], d["load"], d["cores"], d["tasks"] // d["cores"])
    eff[key][(d["grid_seed"], d["lb_step"])] = d["efficiency"]
    if d["error"] is not None:
        fails.append(f"{key} step {d['lb_step'] + 1}: error {d['error']}")
    if d["imbalance_after"] > d["imbalance_before"] * (1 + 1e-9):
        worse.append(f"{key} step {d['lb_step'] + 1}: λ {d['imbalance_before']:.4f} -> "
                     f"{d['imbalance_after']:.4f}")
policies = []
for d in rows:
    if d["policy"] not in policies:
        policies.append(d["policy"])
loads = ["linear", "hotspot", "lbtest", "lbtest-iid"]
Ps = sorted({k[2] for k in eff})
tpws = sorted({k[3] for k in eff})
seeds = sorted({d["grid_seed"] for d in rows})
steps = len({d["lb_step"] for d in rows})
rejected = sum(1 for d in rows if d.get("plan_rejected"))
print(f"sim-grid: {len(rows)} LB steps in {sys.argv[2]} s; flat machine, ring:2 links; lowest "
      f"efficiency (L* / max load) over seeds {seeds}, after LB step 1 / after LB step 3")
head = "".join(f" | {'P=' + str(P):^{6 * len(tpws) - 1}}" for P in Ps)
print(f"{'policy':12} {'load':10} {'step':4}{head}")
print(f"{'':12} {'':10} {'':4}" + "".join(" | " + " ".join(f"{t:>5}" for t in tpws) for P in Ps)
      + "   (tasks per worker)")
for pol in policies:
    for load in loads:
        for step in (0, 2):
            cells = []
            for P in Ps:
                row = []
                for t in tpws:
                    e = [v for (s, k), v in eff.get((pol, load, P, t), {}).items() if k == step]
                    m = min(e) if e else None
                    row.append(f"{m:5.3f}" if m is not None else "    -")
                    if m is None:
                        continue
                    floor = (floor1 if step == 0 else floor3).get(pol, 0)
                    if m < floor - 1e-9:
                        fails.append(f"{pol} {load} P={P} {t}/worker: LB step {step + 1} "
                                     f"efficiency {m:.3f} < {floor}")
                cells.append(" ".join(row))
            print(f"{pol if step == 0 else '':12} {load if step == 0 else '':10} "
                  f"{step + 1:>4}" + "".join(f" | {c}" for c in cells))
print(f"plans refused by the never-worse check: {rejected}")
for w in worse:
    print("WORSE: " + w)
for f in fails:
    print("FAIL: " + f)
print("ok" if not worse and not fails else f"{len(worse)} worse, {len(fails)} below a floor")
sys.exit(1 if worse or fails else 0)
PY

if [ "$plot" = 1 ]; then
  command -v gnuplot >/dev/null || { echo "sim-grid: --plot needs gnuplot" >&2; exit 2; }
  # One .dat per policy: workers, lowest efficiency after LB step 1 and 3, median decision span
  # and decision time of LB step 1 at 64 tasks per worker on lbtest.
  python3 - "$jsonl" "$out" "$name" <<'PY'
import collections, json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
e1, e3, span, dec = (collections.defaultdict(list) for _ in range(4))
for d in rows:
    k = (d["policy"], d["cores"])
    if d["lb_step"] == 0:
        e1[k].append(d["efficiency"])
    if d["lb_step"] == 2:
        e3[k].append(d["efficiency"])
    if d["lb_step"] == 0 and d["load"] == "lbtest" and d["tasks"] == 64 * d["cores"]:
        span[k].append(d["decision_span_s"])
        dec[k].append(d["decision_s"])
for pol in sorted({k[0] for k in e1}):
    with open(f"{sys.argv[2]}/{sys.argv[3]}-{pol}.dat", "w") as f:
        f.write("# workers eff1_min eff3_min span_s decision_s (lbtest, 64 tasks per worker)\n")
        for P in sorted({k[1] for k in e1 if k[0] == pol}):
            k = (pol, P)
            f.write(f"{P} {min(e1[k]):.4f} {min(e3[k]) if e3[k] else float('nan'):.4f} "
                    f"{statistics.median(span[k]) if span[k] else float('nan'):.6g} "
                    f"{statistics.median(dec[k]) if dec[k] else float('nan'):.6g}\n")
PY
  pols=(greedy refine hierarchical smart packdrop distributed greedy-refine greedy-comm)
  cmd=""
  i=0
  for p in "${pols[@]}"; do
    [ -f "$out/$name-$p.dat" ] || continue
    cmd+="'$out/$name-$p.dat' using 1:COL with linespoints pt $((i + 4)) lc $((i + 1)) title '$p', "
    i=$((i + 1))
  done
  cmd=${cmd%, }
  gnuplot <<GP
set terminal pngcairo size 1400,900 font ",10"
set output '$out/$name.png'
set multiplot layout 2,2 title "lbomp-sim --steps 3: linear, hotspot, lbtest, lbtest-iid; 2, 8, 64 tasks per worker; flat machine"
set logscale x 2
set xrange [180:24000]
set xlabel 'workers'
set grid
set key bottom left font ",9" box opaque
set title 'efficiency L*/max load after LB step 1 (lowest over loads, tasks per worker, seeds)'
set yrange [0:1.02]
plot ${cmd//COL/2}
set title 'efficiency after LB step 3 (lowest)'
plot ${cmd//COL/3}
set yrange [*:*]
set logscale y
set format y "%g"
set title 'decision span, s (lbtest, 64 tasks per worker; centralized: decision time)'
plot ${cmd//COL/4}
set title 'decision time on one thread, s (lbtest, 64 tasks per worker)'
plot ${cmd//COL/5}
unset multiplot
GP
  echo "sim-grid: plot in $out/$name.png"
fi
exit $status
