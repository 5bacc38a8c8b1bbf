#!/usr/bin/env bash
# sim-scaling.sh — the scaling page's data and plots: lbomp-sim runs every policy on the Charm++
# lb_test workload (ring:3 links, block mapping) on the SGI UV 2000 profile (24 NUMA nodes),
# sweeping the workers (24 -> 1,024 at 100,000 tasks) and the tasks (10,000 -> 1,000,000 at 192
# workers), and draws decision time, decision span and quality (efficiency, migrations, locality
# cost) into bench/results/. Policies that are not built into this lbomp are left out, and said.
#
#   tools/sim/sim-scaling.sh [BUILD_DIR]       (default: build)
#
# Output: bench/results/sim-scaling.jsonl (one lbomp-sim JSON line per run), sim-scaling-*.dat,
# sim-scaling-cores.png, sim-scaling-tasks.png, sim-scaling-summary.txt (with the run time).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-build}
[ -d "$build" ] || build=$root/$build
sim=$build/tools/lbomp-sim
out=$root/bench/results
profile=$root/numa-profiles/sgi-uv2000-24n.xml
[ -x "$sim" ] || { echo "sim-scaling: $sim is missing: build first (ninja -C $build)" >&2; exit 2; }
command -v gnuplot >/dev/null || { echo "sim-scaling: gnuplot is not installed" >&2; exit 2; }
mkdir -p "$out"

wanted=(greedy refine packdrop distributed hierarchical)
policies=()
missing=()
for p in "${wanted[@]}"; do
  if "$sim" --cores 2 --tasks 8 --links none --policy "$p" >/dev/null 2>&1; then
    policies+=("$p")
  else
    missing+=("$p")
  fi
done
list=$(IFS=,; echo "${policies[*]}")
echo "sim-scaling: policies ${policies[*]}${missing:+; not built here: ${missing[*]}}"

SECONDS=0
jsonl=$out/sim-scaling.jsonl
: > "$jsonl"
run() { # sweep, then lbomp-sim arguments
  local sweep=$1; shift
  nice "$sim" --profile "$profile" --load lbtest --links ring:3 --seed 1 --policy "$list" --json \
    "$@" | sed "s/^{/{\"sweep\":\"$sweep\",/" >> "$jsonl"
}
for cores in 24 48 96 192 384 768 1024; do
  echo "  cores $cores, 100000 tasks"
  run cores --cores "$cores" --tasks 100000 --repeat 9
done
for tasks in 10000 30000 100000 300000 1000000; do
  echo "  192 cores, $tasks tasks"
  repeat=9
  [ "$tasks" -ge 300000 ] && repeat=5
  run tasks --tasks "$tasks" --repeat "$repeat"
done
elapsed=$SECONDS

# One .dat per sweep and policy: x, decision_min_s, decision_span_min_s (minimum over the
# repeats: noise on a shared machine only adds time), efficiency, migrations,
# locality_after / locality_before, messages, imbalance_before, imbalance_after.
python3 - "$jsonl" "$out" <<'PY'
import json, sys, collections
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
series = collections.defaultdict(list)
for d in rows:
    x = d["cores"] if d["sweep"] == "cores" else d["tasks"]
    loc = d["locality_cost_after"] / d["locality_cost_before"] if d["locality_cost_before"] else 1
    series[(d["sweep"], d["policy"])].append((x, d["decision_min_s"], d["decision_span_min_s"],
        d["efficiency"], d["migrations"], loc, d["messages"], d["imbalance_before"],
        d["imbalance_after"]))
for (sweep, pol), pts in series.items():
    with open(f"{sys.argv[2]}/sim-scaling-{sweep}-{pol}.dat", "w") as f:
        f.write("# x decision_min_s decision_span_min_s efficiency migrations locality_ratio messages "
                "imbalance_before imbalance_after\n")
        for p in sorted(pts):
            f.write(" ".join(f"{v:.6g}" for v in p) + "\n")
PY

plot() { # sweep, x label, x range
  local sweep=$1 xlabel=$2 xrange=$3 cmd="" i=0 p
  local pt=(7 5 9 11 13)
  for p in "${policies[@]}"; do
    cmd+="'$out/sim-scaling-$sweep-$p.dat' using 1:COL with linespoints pt ${pt[$i]} lc $((i + 1)) title '$p', "
    i=$((i + 1))
  done
  cmd=${cmd%, }
  gnuplot <<GP
set terminal pngcairo size 1500,900 font ",10"
set output '$out/sim-scaling-$sweep.png'
set multiplot layout 2,3 title "lbomp-sim: lb\\\\_test load, ring:3 links, SGI UV 2000 profile (24 NUMA nodes)"
set logscale x
set xrange [$xrange]
set xlabel '$xlabel'
set key top left font ",9" box opaque
set grid
set format y "%g"
set logscale y
set title 'decision time (wall, one thread; min of repeats), s'
plot ${cmd//COL/2}
unset key
set title 'decision span (critical path; min of repeats), s'
plot ${cmd//COL/3}
set title 'messages + 1 (centralized policies send none)'
plot ${cmd//1:COL/1:(\$7+1)}
unset logscale y
set title 'efficiency L*/max load after'
set yrange [*:1.02]
plot ${cmd//COL/4}
set yrange [*:*]
set logscale y
set title 'migrations'
plot ${cmd//COL/5}
unset logscale y
set title 'locality cost after / before'
plot ${cmd//COL/6}
unset multiplot
GP
}
plot cores "workers (100,000 tasks)" "16:1600"
plot tasks "tasks (192 workers)" "7000:1500000"

{
  echo "sim-scaling.sh: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, sweeps ran in ${elapsed} s"
  echo "policies: ${policies[*]}${missing:+; not built: ${missing[*]}}"
  python3 - "$jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print("times: minimum over the repeats (median in sim-scaling.jsonl)")
print(f"{'sweep':6} {'cores':>5} {'tasks':>8} {'policy':12} {'decision_s':>11} {'span_s':>11} "
      f"{'eff':>6} {'moves':>8} {'loc-ratio':>9} {'messages':>9} {'rounds':>6} {'rss_mb':>7}")
for d in rows:
    loc = d["locality_cost_after"] / d["locality_cost_before"] if d["locality_cost_before"] else 1
    print(f"{d['sweep']:6} {d['cores']:5} {d['tasks']:8} {d['policy']:12} {d['decision_min_s']:11.4g} "
          f"{d['decision_span_min_s']:11.4g} {d['efficiency']:6.3f} {d['migrations']:8} {loc:9.3f} "
          f"{d['messages']:9} {d['rounds']:6} {d['peak_rss_mb']:7.0f}")
PY
} > "$out/sim-scaling-summary.txt"
cat "$out/sim-scaling-summary.txt"
echo "sim-scaling: plots in $out/sim-scaling-cores.png and $out/sim-scaling-tasks.png"
