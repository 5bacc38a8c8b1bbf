#!/usr/bin/env bash
# check_sim_auto.sh — auto's when-rule on lbomp-sim --evolve, where every step's costs are known
# (no clock decides anything but the LB step's cost, far below these workloads' imbalance):
# on balanced costs (2 % noise) auto runs no LB step; on a hotspot that appears at step 55 it
# balances within the first window after it (its first LB step at steps 55-64) and ends faster
# than none; on hotspots that cycle it balances, and every LB step it runs moves tasks. A fixed
# policy plans nothing while the timed steps are balanced within the tolerance (the runtime's
# check, lbstep.c): no LB step on the balanced costs, refine's first on the hotspot at 59. Then
# auto's training rows: from --evolve and from a recorded trace, each with every feature, a time
# per candidate and the label of the fastest. A narrow hotspot going round the tasks faster than the
# window (64 tasks on 16 workers): refine interleaves them (lbstep.c, spread_pays) and runs well
# below none; auto, which arms an LB step for it, does as well in fewer LB steps. A fixed policy
# runs only where its plan can pay, as in the runtime (lbstep.c, "moves that pay"): on costs that
# walk (512 tasks on 32 workers), greedy plans at all 20 LB steps when tasks own no data, and
# after its first LB step moved 1 MiB tasks at 1 ns a byte (half a second), at none.
#   check_sim_auto.sh LBOMP_SIM
set -euo pipefail
sim=$1
common=(--tasks 2048 --cores 16 --load uniform --links ring:2 --time-steps 200 --period 10 --json)
bal=$("$sim" --evolve static --noise 0.02 --policy auto "${common[@]}")
balfix=$("$sim" --evolve static --noise 0.02 --policy greedy,refine "${common[@]}")
hot=$("$sim" --evolve hotspot --hot-at 55 --amp 4 --policy none,auto,refine "${common[@]}")
cyc=$("$sim" --evolve cycle --cycle 40 --amp 4 --policy none,auto "${common[@]}")
mov=$("$sim" --evolve drift --tasks 64 --cores 16 --load uniform --links ring:2 --amp 8 \
        --width 0.02 --drift-speed 0.03 --time-steps 200 --period 10 --policy none,refine,auto --json)
walk=(--tasks 512 --cores 32 --load linear --links none --evolve walk --seed 3 --drift-speed 0.4
      --noise 0 --link-bytes 0 --byte-ns 1.0 --time-steps 200 --period 10 --policy none,greedy --json)
cheap=$("$sim" "${walk[@]}" --task-bytes 0)
dear=$("$sim" "${walk[@]}" --task-bytes 1048576)
tmp=$(mktemp -d /tmp/lbomp-sim-auto-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
"$sim" --tasks 512 --cores 8 --load linear --steps 3 --policy refine --record "$tmp/r.trc" >/dev/null
"$sim" --trace "$tmp/r.trc" --auto-data > "$tmp/trace.rows"
"$sim" --evolve drift --tasks 256 --cores 8 --auto-data --time-steps 60 > "$tmp/evolve.rows"
echo "$bal"; echo "$balfix"; echo "$hot"; echo "$cyc"; echo "$mov"; echo "$cheap"; echo "$dear"
python3 - "$bal" "$hot" "$cyc" "$tmp/trace.rows" "$tmp/evolve.rows" "$balfix" "$mov" "$cheap" \
        "$dear" <<'PY'
import json, sys
bal = json.loads(sys.argv[1])
hot = {r["policy"]: r for r in map(json.loads, sys.argv[2].splitlines())}
cyc = {r["policy"]: r for r in map(json.loads, sys.argv[3].splitlines())}
errors = []
for r in map(json.loads, sys.argv[6].splitlines()):
    if r["lb_steps"] != 0 or r["skipped"] != 20:
        errors.append(f"balanced under {r['policy']}: {r['lb_steps']} LB steps planned, "
                      f"{r['skipped']} skipped, expected 0 and 20")
if bal["lb_steps"] != 0:
    errors.append(f"balanced: {bal['lb_steps']} LB steps at {bal['lb_at']}, expected none")
a = hot["auto"]
if not a["lb_at"] or not 55 <= a["lb_at"][0] <= 64:
    errors.append(f"hotspot at step 55: first LB step at {a['lb_at'][:1]}, expected 55-64")
if not a["total_s"] < hot["none"]["total_s"]:
    errors.append(f"hotspot: auto {a['total_s']} s not below none {hot['none']['total_s']} s")
if hot["refine"]["lb_at"][:1] != [59]:
    errors.append(f"hotspot at step 55: refine planned first at {hot['refine']['lb_at'][:1]}, "
                  f"expected 59 (the windows before are balanced)")
c = cyc["auto"]
if c["lb_steps"] < 3 or c["migrations"] == 0 or not c["total_s"] < cyc["none"]["total_s"]:
    errors.append(f"cycle: auto {c['lb_steps']} LB steps, {c['migrations']} migrations, "
                  f"{c['total_s']} s (none {cyc['none']['total_s']} s)")
mov = {r["policy"]: r for r in map(json.loads, sys.argv[7].splitlines())}
if not mov["refine"]["total_s"] < 0.7 * mov["none"]["total_s"]:
    errors.append(f"moving hotspot: refine {mov['refine']['total_s']} s, none "
                  f"{mov['none']['total_s']} s: not interleaved?")
a, r = mov["auto"], mov["refine"]
if not a["total_s"] <= 1.02 * r["total_s"] or not a["lb_steps"] < r["lb_steps"]:
    errors.append(f"moving hotspot: auto {a['total_s']} s in {a['lb_steps']} LB steps, refine "
                  f"{r['total_s']} s in {r['lb_steps']}")
cheap, dear = ({r["policy"]: r for r in map(json.loads, a.splitlines())} for a in sys.argv[8:10])
g, d = cheap["greedy"], dear["greedy"]
if g["lb_steps"] != 20 or not g["total_s"] < cheap["none"]["total_s"]:
    errors.append(f"walk, tasks without data: greedy {g['lb_steps']} LB steps, {g['total_s']} s "
                  f"(none {cheap['none']['total_s']} s); expected 20, faster")
if d["lb_steps"] != 1 or d["skipped"] != 19 or not d["lb_s"] > 0.3:
    errors.append(f"walk, 1 MiB tasks: greedy {d['lb_steps']} LB steps ({d['skipped']} skipped), "
                  f"{d['lb_s']} s in them; expected 1 and 19 skipped after a first one of > 0.3 s")
for name, want in ((sys.argv[4], 3), (sys.argv[5], 5)):
    rows = [json.loads(l) for l in open(name) if l.strip()]
    if len(rows) != want:
        errors.append(f"{name}: {len(rows)} rows, expected {want}")
    for r in rows:
        if len(r["f"]) != 12 or len(r["t"]) != 7 or r["t"][r["label"]] > min(r["t"]) * (1 + 1e-9):
            errors.append(f"{name}: bad row {r}")
            break
if errors:
    print("FAIL: " + "; ".join(errors)); sys.exit(1)
print("ok")
PY
