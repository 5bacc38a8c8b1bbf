#!/usr/bin/env bash
# lbomp-sim smoke run, small: every registered policy on a synthetic lb_test workload with mesh3d
# links on the 8-node EPYC profile prints one JSON line each with the contract's keys; none moves
# nothing, greedy balances, refine moves fewer tasks than greedy, every plan is valid (the sim
# checks it). A flat --cores machine has one node. --record then --trace --verify reproduces each
# plan. Every bad option exits 2 with a message naming the option.
set -euo pipefail
sim=$1 profiles=$2
tmp=$(mktemp -d /tmp/lbomp-check-sim-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

"$sim" --profile "$profiles/epyc-7742-2s-nps4.xml" --tasks 20000 --load lbtest --links mesh3d \
  --policy all --seed 3 --json > "$tmp/all.json"
"$sim" --cores 64 --tasks 5000 --load hotspot --links ring:2 --policy greedy,refine --json \
  --record "$tmp/rec.trc" > "$tmp/flat.json"
"$sim" --trace "$tmp/rec.trc" --policy greedy,refine --verify --json > "$tmp/replay.json"
cat "$tmp/all.json" "$tmp/flat.json"
python3 - "$tmp/all.json" "$tmp/flat.json" "$tmp/replay.json" <<'PY'
import json, sys
load = lambda f: [json.loads(l) for l in open(f) if l.strip()]
allp, flat, replay = (load(f) for f in sys.argv[1:4])
err = []
keys = ("policy cores nodes tasks imbalance_before imbalance_after efficiency migrations "
        "locality_cost_before locality_cost_after messages rounds decision_s decision_span_s "
        "peak_rss_mb").split()
by = {d["policy"]: d for d in allp}
for name in ("none", "greedy", "refine"):
    if name not in by: err.append(f"--policy all lacks {name}")
for d in allp + flat:
    for k in keys:
        if k not in d: err.append(f"{d['policy']}: key {k} missing")
    if d["error"] is not None: err.append(f"{d['policy']}: error {d['error']}")
    if not (0 < d["efficiency"] <= 1 + 1e-9): err.append(f"{d['policy']}: efficiency {d['efficiency']}")
    if d["kind"] == "centralized" and d["decision_span_s"] != d["decision_s"]:
        err.append(f"{d['policy']}: span {d['decision_span_s']} != decision {d['decision_s']}")
    if d["kind"] == "decentralized" and d["migrations"] > 0 and d["messages"] == 0:
        err.append(f"{d['policy']}: moved tasks without a message")
for d in allp:
    if (d["cores"], d["nodes"], d["tasks"], d["topology"]) != (128, 8, 20000, "epyc-7742-2s-nps4.xml"):
        err.append(f"{d['policy']}: machine {d['cores']} cores {d['nodes']} nodes {d['tasks']} tasks")
    if not 1.8 < d["imbalance_before"] < 2.1:  # graded lb_test: worker p's tasks in its 1/P slice
        err.append(f"{d['policy']}: lbtest starts at lambda {d['imbalance_before']}, expected about 2")
n, g, r = by.get("none"), by.get("greedy"), by.get("refine")
if n and (n["migrations"] != 0 or n["imbalance_after"] != n["imbalance_before"]
          or n["locality_cost_after"] != n["locality_cost_before"]):
    err.append("none changed the mapping")
if g and (g["efficiency"] < 0.95 or g["imbalance_after"] > g["imbalance_before"]):
    err.append(f"greedy: efficiency {g['efficiency']}, imbalance {g['imbalance_before']} -> {g['imbalance_after']}")
if g and r and not r["migrations"] < g["migrations"]:
    err.append(f"refine moved {r['migrations']} tasks, greedy {g['migrations']}")
for d in flat:
    if (d["cores"], d["nodes"], d["links"]) != (64, 1, 10000):
        err.append(f"flat {d['policy']}: {d['cores']} cores {d['nodes']} nodes {d['links']} links")
if d["imbalance_before"] < 2: err.append(f"hotspot imbalance only {d['imbalance_before']}")
if len(replay) != 4: err.append(f"{len(replay)} replay lines, expected 2 records x 2 policies")
for d in replay:
    if d["policy"] == d["recorded_policy"] and d.get("plan_equal") is not True:
        err.append(f"replay of {d['policy']}: plan differs in {d['plan_diff']} tasks")
print("FAIL: " + "; ".join(err) if err else f"ok: {len(allp)} policies, flat machine, record and replay")
sys.exit(1 if err else 0)
PY

bad() { # expected words, then the arguments
  local words=$1; shift
  set +e
  msg=$("$sim" "$@" 2>&1 >/dev/null)
  rc=$?
  set -e
  echo "lbomp-sim $*: rc $rc: $msg"
  [ "$rc" -eq 2 ] || { echo "FAIL: exit $rc, expected 2"; exit 1; }
  grep -qF -- "$words" <<<"$msg" || { echo "FAIL: message lacks '$words'"; exit 1; }
}
bad "no input" --cores 4
bad "no machine" --tasks 100
bad "--tasks '0'" --tasks 0 --cores 4
bad "--tasks 'x'" --tasks x --cores 4
bad "--cores '70000'" --tasks 10 --cores 70000
bad "--load 'zipf'" --tasks 10 --cores 4 --load zipf
bad "--links 'ring:0'" --tasks 10 --cores 4 --links ring:0
bad "--links 'torus'" --tasks 10 --cores 4 --links torus
bad "ring:3 needs more than 6 tasks" --tasks 6 --cores 4 --links ring:3
bad "'bogus' is not a policy; valid: none, greedy, refine" --tasks 10 --cores 4 --policy greedy,bogus
bad "empty" --tasks 10 --cores 4 --policy greedy,,refine
bad "--seed" --tasks 10 --cores 4 --seed -1
bad "--repeat '0'" --tasks 10 --cores 4 --repeat 0
bad "--profile '$tmp/none.xml'" --tasks 10 --profile "$tmp/none.xml"
bad "cannot be combined with --trace" --trace "$tmp/rec.trc" --tasks 10
bad "--verify" --tasks 10 --cores 4 --verify
bad "needs a value" --tasks 10 --cores
bad "unknown option '--frobnicate'" --frobnicate
bad "cannot open the trace" --trace "$tmp/missing.trc"
echo ok
