#!/usr/bin/env bash
# The packdrop issue's acceptance, run as written: packdrop, distributed and smart each balance
# the hotspot load (imbalance_last ≤ 1.10) by moving tasks, report a `messages` figure (above 0 for
# the decentralized two) and keep the checksum of --policy none; LBOMP_POLICY=help lists all
# three with one line each. And the part of the locality issue that is packdrop's: on the EPYC
# profile with --k 3 --threads 16, packdrop ends with a lower locality_cost_last than greedy, at
# imbalance_last ≤ 1.25. Usage: check_kneighbor_dec.sh KNEIGHBOR PROFILES_DIR
set -euo pipefail
# The policies' own balance is judged: stealing (on by default) would charge stolen tasks at the
# thieves' speed and blur the owner-based λ of one window.
export LBOMP_STEAL=off
kn=$1
profiles=${2:-}
args=(--tasks 512 --load hotspot --iters 60 --period 10 --threads 2 --json)
none=$("$kn" "${args[@]}" --policy none)
echo "none:        $none"
fail=0
# imbalance_last is measured live: a run whose thread lost its core for a while to another
# process reads as imbalanced whatever the policy did. Such a run (only that check failing, exit 2)
# is run again, up to three runs in all; a policy that does not balance fails all three.
for p in packdrop distributed smart; do
  for attempt in 1 2 3; do
    out=$("$kn" "${args[@]}" --policy "$p")
    echo "$p (run $attempt): $out"
    rc=0
    python3 - "$none" "$out" "$p" <<'PY' || rc=$?
import json, sys
none, run = (json.loads(s.strip().splitlines()[-1]) for s in sys.argv[1:3])
p = sys.argv[3]
errors = []
if run["policy"] != p: errors.append(f"policy {run['policy']} != {p}")
live = run["imbalance_last"] > 1.10
if run["migrations"] <= 0: errors.append("no migrations")
if "messages" not in run: errors.append("no messages key")
elif p != "smart" and run["messages"] <= 0: errors.append("no messages counted")
if run["checksum"] != none["checksum"]: errors.append(f"checksum {run['checksum']} != none {none['checksum']}")
if errors:
    print(f"FAIL {p}: " + "; ".join(errors)); sys.exit(1)
if live:
    print(f"{p}: imbalance_last {run['imbalance_last']} > 1.10"); sys.exit(2)
PY
    [ $rc -ne 2 ] && break
  done
  [ $rc -ne 0 ] && { echo "FAIL $p"; fail=1; }
done
help=$(LBOMP_POLICY=help "$kn")
echo "$help"
for p in packdrop distributed smart; do
  [ "$(grep -c "^$p " <<<"$help")" -eq 1 ] || { echo "FAIL: help does not list $p once"; fail=1; }
done
if [ -n "$profiles" ]; then
  args=(--k 3 --threads 16 --tasks 512 --load linear --iters 60 --work-us 20 --json)
  epyc="$profiles/epyc-7742-2s-nps4.xml"
  greedy=$(LBOMP_TOPOLOGY=$epyc "$kn" "${args[@]}" --policy greedy | tail -n 1)
  echo "epyc greedy:   $greedy"
  # 16 threads on this host's cores: imbalance_last is as live as above (it read 1.08-1.23 over 8
  # quiet runs and 1.31 once in CI), so a run failing only that check runs again, three in all.
  for attempt in 1 2 3; do
    pd=$(LBOMP_TOPOLOGY=$epyc "$kn" "${args[@]}" --policy packdrop | tail -n 1)
    echo "epyc packdrop (run $attempt): $pd"
    rc=0
    python3 - "$greedy" "$pd" <<'PY' || rc=$?
import json, sys
g, p = (json.loads(s) for s in sys.argv[1:3])
errors = []
if not p["locality_cost_last"] < g["locality_cost_last"]:
    errors.append(f"packdrop locality_cost_last {p['locality_cost_last']} not below greedy's {g['locality_cost_last']}")
if p["checksum"] != g["checksum"]: errors.append("checksums differ")
if errors:
    print("FAIL epyc: " + "; ".join(errors)); sys.exit(1)
if p["imbalance_last"] > 1.25:
    print(f"epyc: packdrop imbalance_last {p['imbalance_last']} > 1.25"); sys.exit(2)
PY
    [ $rc -ne 2 ] && break
  done
  [ $rc -ne 0 ] && { echo "FAIL epyc packdrop"; fail=1; }
fi
[ "$fail" -eq 0 ] && echo ok
exit "$fail"
