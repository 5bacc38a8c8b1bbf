#!/usr/bin/env bash
# Runs the linkcell benchmark in its five variants, interleaved (A B C D E A B C D E ...) so that
# the machine's drift hits them alike: plain OpenMP with schedule(static), (dynamic,1) and (guided),
# LBOMP_FOR and the task form, both with the default configuration (every LBOMP_* variable is
# unset). Prints medians, the ratios the issue asks about, and the load average around the run.
# Usage: bench/linkcell/compare.sh [BUILD_DIR] [REPEATS] [extra linkcell options...]
set -euo pipefail
build=${1:-build}
repeats=${2:-5}
shift 2 || shift $# || true
bin="$build/bench/linkcell"
for v in $(env | grep -o '^LBOMP_[A-Z_]*' || true); do unset "$v"; done
opts=(--threads 2 --json "$@")
variants=("--baseline omp-static" "--baseline omp-dynamic" "--baseline omp-guided" "--form for"
  "--form tasks")
echo "linkcell ${opts[*]}, $repeats interleaved repeats; load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for r in $(seq "$repeats"); do
  for v in "${variants[@]}"; do
    printf '\r  repeat %s/%s: %-22s' "$r" "$repeats" "$v" >&2
    # shellcheck disable=SC2086
    "$bin" $v "${opts[@]}" | tail -n 1 >>"$out"
  done
done
printf '\r%60s\r' '' >&2
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
python3 - "$out" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by = {}
for r in rows:
    by.setdefault(r["baseline"] or "lbomp-" + r["form"], []).append(r)
med = lambda xs: statistics.median(xs)
t = {k: med([r["total_s"] for r in v]) for k, v in by.items()}
omp = {k: v for k, v in t.items() if k.startswith("omp-")}
best = min(omp, key=omp.get)
print("| variant | total s (median) | step s (median) | ratio to best OpenMP | λ first | λ last | LB steps | migrations | chunks force/integrate |")
print("|---|---|---|---|---|---|---|---|---|")
for k, rs in by.items():
    fmt = lambda x: "-" if x is None else f"{x:.3f}"
    print(f"| {k} | {t[k]:.3f} | {med([r['step_s_median'] for r in rs]):.4f} | {t[k]/t[best]:.3f} | "
          f"{fmt(rs[0]['imbalance_first'] and med([r['imbalance_first'] for r in rs]))} | "
          f"{fmt(rs[0]['imbalance_last'] and med([r['imbalance_last'] for r in rs]))} | "
          f"{int(med([r['lb_steps'] for r in rs]))} | {int(med([r['migrations'] for r in rs]))} | "
          f"{int(med([r['chunks_force'] for r in rs]))}/{int(med([r['chunks_integrate'] for r in rs]))} |")
checks = {r["checksum"] for r in rows}
once = all(r["exactly_once"] for r in rows)
print(f"\nbest OpenMP schedule: {best}; LBOMP_FOR / best OpenMP = {t['lbomp-for']/t[best]:.3f}; "
      f"LBOMP_FOR / task form = {t['lbomp-for']/t['lbomp-tasks']:.3f}")
print(f"checksums: {'all equal' if len(checks) == 1 else 'DIFFER: ' + str(sorted(checks))}; "
      f"exactly once: {'yes' if once else 'NO'}")
sys.exit(0 if len(checks) == 1 and once else 1)
PY
