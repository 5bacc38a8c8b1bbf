#!/usr/bin/env bash
# Unequal cores, live (README "Unequal cores"): a CPU hog pinned to core 1 (`taskset -c 1 yes`)
# beside a 2-thread `kneighbor --load uniform`, the variants interleaved, REPEATS rounds:
#   default       lbomp's default configuration (refine, stealing, LBOMP_SPEEDS=auto)
#   blind         the same with LBOMP_SPEEDS=off (every worker speed 1.0: the plans of before)
#   none          --policy none (nothing moves: no plan, no stealing; each thread runs its half)
#   none-steal    --policy none with LBOMP_STEAL=all (stealing alone)
#   default-nosteal  the default with LBOMP_STEAL=off (the speed-aware plan alone)
#   omp-dynamic   --baseline omp-dynamic (no lbomp)
# plus `default` without the hog. Prints one line per run, then a table of medians (total
# seconds and median step) with ratios against none, none-steal and omp-dynamic, the two
# workers' speeds of the default runs (from --report-json), and the load average before/after.
# usage: bench/hog.sh KNEIGHBOR [REPEATS (default 7)] [extra kneighbor options]
set -euo pipefail
kn=${1:?usage: bench/hog.sh KNEIGHBOR [REPEATS] [options]}
reps=${2:-7}
shift 2 || shift $#
[ "$(nproc)" -ge 2 ] || { echo "hog.sh: needs 2 CPUs" >&2; exit 1; }
tmp=$(mktemp -d /tmp/lbomp-hog-XXXXXX)
hog=
cleanup() { [ -n "$hog" ] && kill "$hog" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
run() { # name hog(0/1) env... -- args...
  local name=$1 with=$2; shift 2
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  if [ "$with" = 1 ]; then
    taskset -c 1 yes > /dev/null &
    hog=$!
    sleep 0.2
  fi
  env OMP_NUM_THREADS=2 "${envs[@]}" "$kn" --load uniform --threads 2 --json \
    --report-json "$tmp/report.json" "$@" > "$tmp/out.json"
  if [ -n "$hog" ]; then kill "$hog"; wait "$hog" 2>/dev/null || true; hog=; fi
  python3 - "$name" "$tmp/out.json" "$tmp/report.json" <<'PY' | tee -a "$tmp/runs"
import json, sys
name, out, rep = sys.argv[1:4]
d = json.loads(open(out).read().strip().splitlines()[-1])
sp = ""
try:
    r = json.load(open(rep))
    sp = " ".join(f"{w['speed']:.3g}" for w in r.get("speeds", []))
except Exception:
    pass
print(f"{name} {d['total_s']:.4f} {d['step_s_median']:.5f} {sp or '-'}")
PY
  rm -f "$tmp/report.json"
}
for ((i = 1; i <= reps; i++)); do
  run default 1 LBOMP_X=1 -- "$@"
  run blind 1 LBOMP_SPEEDS=off -- "$@"
  run none 1 LBOMP_X=1 -- --policy none "$@"
  run none-steal 1 LBOMP_STEAL=all -- --policy none "$@"
  run default-nosteal 1 LBOMP_STEAL=off -- "$@"
  run omp-dynamic 1 LBOMP_X=1 -- --baseline omp-dynamic "$@"
  run default-nohog 0 LBOMP_X=1 -- "$@"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$tmp/runs" "$reps" <<'PY'
import sys, statistics as st
rows = [l.split() for l in open(sys.argv[1])]
by = {}
for r in rows:
    by.setdefault(r[0], []).append(r)
med = {k: (st.median(float(r[1]) for r in v), st.median(float(r[2]) for r in v)) for k, v in by.items()}
print(f"\n{sys.argv[2]} interleaved rounds, medians (hog: taskset -c 1 yes > /dev/null)\n")
print("| variant | total s | median step s | total / none | total / none-steal | total / omp-dynamic | step / none | step / omp-dynamic | speeds (w0 w1, last run) |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
for k in ["default", "blind", "none", "none-steal", "default-nosteal", "omp-dynamic",
          "default-nohog"]:
    if k not in med: continue
    t, s = med[k]
    f = lambda a, b: f"{a / b:.3f}"
    print(f"| {k} | {t:.3f} | {s:.4f} | {f(t, med['none'][0])} | {f(t, med['none-steal'][0])} | "
          f"{f(t, med['omp-dynamic'][0])} | {f(s, med['none'][1])} | {f(s, med['omp-dynamic'][1])} | {' '.join(by[k][-1][3:]) or '-'} |")
PY
