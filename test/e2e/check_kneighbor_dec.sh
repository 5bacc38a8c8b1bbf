#!/usr/bin/env bash
# The packdrop issue's acceptance, run as written: packdrop, distributed and smart each balance
# the hotspot load (imbalance_last ≤ 1.10) by moving tasks, report a `messages` figure (above 0 for
# the decentralized two) and keep the checksum of --policy none; LBOMP_POLICY=help lists all
# three with one line each.
set -euo pipefail
kn=$1
args=(--tasks 512 --load hotspot --iters 60 --period 10 --threads 2 --json)
none=$("$kn" "${args[@]}" --policy none)
echo "none:        $none"
fail=0
for p in packdrop distributed smart; do
  out=$("$kn" "${args[@]}" --policy "$p")
  echo "$p: $out"
  python3 - "$none" "$out" "$p" <<'PY' || fail=1
import json, sys
none, run = (json.loads(s.strip().splitlines()[-1]) for s in sys.argv[1:3])
p = sys.argv[3]
errors = []
if run["policy"] != p: errors.append(f"policy {run['policy']} != {p}")
if run["imbalance_last"] > 1.10: errors.append(f"imbalance_last {run['imbalance_last']} > 1.10")
if run["migrations"] <= 0: errors.append("no migrations")
if "messages" not in run: errors.append("no messages key")
elif p != "smart" and run["messages"] <= 0: errors.append("no messages counted")
if run["checksum"] != none["checksum"]: errors.append(f"checksum {run['checksum']} != none {none['checksum']}")
if errors:
    print(f"FAIL {p}: " + "; ".join(errors)); sys.exit(1)
PY
done
help=$(LBOMP_POLICY=help "$kn")
echo "$help"
for p in packdrop distributed smart; do
  [ "$(grep -c "^$p " <<<"$help")" -eq 1 ] || { echo "FAIL: help does not list $p once"; fail=1; }
done
[ "$fail" -eq 0 ] && echo ok
exit "$fail"
