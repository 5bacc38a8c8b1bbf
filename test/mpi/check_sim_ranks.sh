#!/usr/bin/env bash
# lbomp-sim --ranks, the rank level of liblbomp-mpi replayed offline (128 ranks x 16 threads, the
# Charm++ lb_test load graded over the ranks, 16 tasks per thread): every policy's plan is valid
# (lbomp-sim checks it and exits 1 otherwise); packdrop and refine bring the ranks to efficiency
# >= 0.90 and the threads above what the ranks alone reach; packdrop sends fewer messages than
# distributed; misused options are refused with their message. Plans and counts only: the README
# gives the 1,024-rank x 64-thread run and its times. Usage: check_sim_ranks.sh LBOMP_SIM
set -euo pipefail
sim=$1
out=$("$sim" --ranks 128 --rank-threads 16 --tasks 32768 --load lbtest \
  --policy packdrop,distributed,refine,greedy --json)
python3 - "$out" <<'PY'
import json, sys
runs = {d["policy"]: d for d in map(json.loads, sys.argv[1].splitlines())}
bad = []
for p, d in runs.items():
    print(f"{p}: ranks λ {d['rank_imbalance_before']:.3f} -> {d['rank_imbalance_after']:.3f}, "
          f"efficiency {d['rank_efficiency']:.3f} (threads {d['efficiency']:.3f}, ranks alone "
          f"{d['efficiency_inner_only']:.3f}), {d['messages']} messages, {d['migrations']} tasks "
          f"change rank")
    if d["error"] is not None: bad.append(f"{p}: error {d['error']}")
    if d["task_messages"] != d["migrations"]: bad.append(f"{p}: one message per moved task")
for p in ("packdrop", "refine"):
    if not runs[p]["rank_efficiency"] >= 0.90: bad.append(f"{p}: rank efficiency < 0.90")
    if not runs[p]["efficiency"] > runs[p]["efficiency_inner_only"]: bad.append(f"{p}: threads no better")
if not runs["packdrop"]["messages"] < runs["distributed"]["messages"]:
    bad.append("packdrop sends no fewer messages than distributed")
if runs["refine"]["messages"] != 0 or runs["refine"]["gather_bytes"] <= 0:
    bad.append("refine: a centralized plan gathers, it sends no policy message")
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
expect() { # message, then the command
  local want=$1 got
  shift
  if got=$("$@" 2>&1); then echo "FAIL: accepted: $*"; exit 1; fi
  grep -qF -- "$want" <<<"$got" || { echo "FAIL: $*: '$got' lacks '$want'"; exit 1; }
}
expect "--cores cannot be combined with --ranks" "$sim" --ranks 4 --cores 3 --tasks 10
expect "--inner needs --ranks" "$sim" --inner refine --cores 2 --tasks 10
expect "--inner: 'nope' is not a policy; valid: none" "$sim" --ranks 4 --tasks 100 --inner nope
expect "--ranks needs --tasks N" "$sim" --ranks 4
expect "--rank-threads '0' is not valid" "$sim" --ranks 4 --tasks 10 --rank-threads 0
echo ok
