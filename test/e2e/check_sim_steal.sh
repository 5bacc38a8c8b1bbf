#!/usr/bin/env bash
# check_sim_steal.sh — lbomp-sim --evolve --steal K, the runtime's stealing modelled (evolve.c,
# steal_step): stealing changes the steps' times, never the decisions (every policy's LB steps and
# migrations as without it, for every K); with free steals (K = 0) no step is longer than without
# stealing, for every policy (a thief only takes a task its owner would have begun later), and on
# a hotspot `none` is faster; with one task per worker there is nothing to take (`none` the same
# time to the last digit; the totals of the others include their measured decision times, which
# differ from run to run by µs); --steal without --evolve is refused with the reason.
#   check_sim_steal.sh LBOMP_SIM
set -euo pipefail
sim=$1
pols=none,greedy,refine,auto
hot=(--tasks 512 --cores 8 --load hotspot --links ring:2 --evolve drift --drift-speed 0.01
     --time-steps 120 --period 10 --policy "$pols" --json)
one=(--tasks 16 --cores 16 --load lbtest --evolve walk --time-steps 60 --policy "$pols" --json)
a=$("$sim" "${hot[@]}")
b=$("$sim" "${hot[@]}" --steal 0)
c=$("$sim" "${hot[@]}" --steal 1.5)
d=$("$sim" "${one[@]}")
e=$("$sim" "${one[@]}" --steal 0)
if msg=$("$sim" --tasks 64 --cores 4 --steal 0.5 2>&1); then
        echo "FAIL: --steal without --evolve was accepted"; exit 1
fi
case "$msg" in
*"--steal models the steps of --evolve's runs: it needs --evolve KIND"*) ;;
*) echo "FAIL: --steal without --evolve: '$msg'"; exit 1 ;;
esac
python3 - "$a" "$b" "$c" "$d" "$e" <<'PY'
import json, sys
runs = [{r["policy"]: r for r in map(json.loads, s.splitlines())} for s in sys.argv[1:]]
plain, free, dear, one, one_free = runs
errors = []
for p, r in plain.items():
    for name, other in (("--steal 0", free), ("--steal 1.5", dear)):
        o = other[p]
        if (o["lb_steps"], o["migrations"]) != (r["lb_steps"], r["migrations"]):
            errors.append(f"{p} {name}: {o['lb_steps']} LB steps, {o['migrations']} migrations, "
                          f"without stealing {r['lb_steps']}, {r['migrations']}")
    if not free[p]["total_s"] <= r["total_s"] * (1 + 1e-3):
        errors.append(f"{p}: {free[p]['total_s']} s with free steals, {r['total_s']} s without")
    print(f"{p}: {r['total_s']:.4f} s without stealing, {free[p]['total_s']:.4f} s with free "
          f"steals, {dear[p]['total_s']:.4f} s with a stolen task 2.5 x")
if not free["none"]["total_s"] < 0.9 * plain["none"]["total_s"]:
    errors.append(f"hotspot: none {free['none']['total_s']} s with free steals, "
                  f"{plain['none']['total_s']} s without")
for p, r in one.items():
    tol = 0 if p == "none" else 1e-3 * r["total_s"]
    if abs(one_free[p]["total_s"] - r["total_s"]) > tol:
        errors.append(f"one task per worker, {p}: {one_free[p]['total_s']} s with stealing, "
                      f"{r['total_s']} s without")
if errors:
    print("FAIL: " + "; ".join(errors)); sys.exit(1)
print("ok")
PY
