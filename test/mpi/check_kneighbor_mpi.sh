#!/usr/bin/env bash
# kneighbor-mpi against kneighbor, on 1, 2 and 4 ranks (one or two threads each): the checksum is
# kneighbor's whatever the ranks, the placement and the rank-level policy; every task runs once per
# step; on the hotspot the ranks start imbalanced (λ >= 1.3 over the first window: the hot tenth
# is on rank 0), tasks change rank, and the plan predicts λ <= 1.10. Predictions, not live λ: the
# tests must not fail because the machine is busy (README "MPI" measures the live λ).
# Usage: check_kneighbor_mpi.sh RUN_MPI KNEIGHBOR KNEIGHBOR_MPI
set -euo pipefail
run=$1 kn=$2 knm=$3
args=(--tasks 256 --load hotspot --iters 30 --period 5 --work-us 20)
ref=$("$kn" "${args[@]}" --policy none --threads 1 --json)
sum=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["checksum"])' "$ref")
echo "kneighbor --policy none: checksum $sum"
fail=0
check() { # NP THREADS EXTRA...
  local np=$1 th=$2
  shift 2
  local out rc attempt
  # imbalance_first is the one live figure checked: a rank that lost its core to another process
  # during the first window can hide the hot tenth. A run where only it fails (exit 2) is run
  # again, up to three runs in all.
  for attempt in 1 2 3; do
    rc=0
    out=$("$run" "$np" "$th" "$knm" "${args[@]}" --threads "$th" --json "$@" | tail -n 1) || rc=$?
    [ $rc -eq 77 ] && exit 77
    rc=0
    python3 - "$sum" "$np" "$out" "$*" <<'PY' || rc=$?
import json, sys
want, np, line, extra = float(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
try:
    d = json.loads(line)
except ValueError:
    print(f"FAIL -np {np} {extra}: no JSON line: {line!r}"); sys.exit(1)
bad = []
if d["checksum"] != want: bad.append(f"checksum {d['checksum']!r} != {want!r}")
if d["exactly_once"] is not True: bad.append("exactly_once false")
if d["ranks"] != np: bad.append(f"ranks {d['ranks']}")
for k in ("ranks", "rank_migrations", "mpi_messages", "mpi_bytes"):
    if k not in d: bad.append(f"no key {k}")
balancing = np > 1 and d["rank_policy"] != "none"
live = balancing and not d["imbalance_first"] >= 1.3
if balancing:
    if not d["rank_migrations"] > 0: bad.append("no task changed rank")
    # packdrop and refine end within the tolerance (1.05) up to a task; distributed (Grapevine)
    # promises less: it must improve.
    bound = 1.10 if d["rank_policy"] in ("packdrop", "refine") else d["imbalance_first"]
    if not d["imbalance_predicted"] <= bound: bad.append(f"predicted λ {d['imbalance_predicted']} > {bound}")
    if not d["mpi_messages"] >= d["rank_migrations"]: bad.append("fewer MPI messages than moves")
if live: bad_live = f"; imbalance_first {d['imbalance_first']} < 1.3 (live: run again)"
print(("FAIL" if bad else "again" if live else "ok") + f" -np {np} {extra}: checksum {d['checksum']}, λ ranks "
      f"{d['imbalance_first']} -> {d['imbalance_last']} (predicted {d.get('imbalance_predicted')}), "
      f"{d['rank_migrations']} moves, {d['mpi_messages']} MPI messages" + ("; " + "; ".join(bad) if bad else "") + (bad_live if live else ""))
if live and not bad:
    sys.exit(2)
sys.exit(1 if bad else 0)
PY
    [ $rc -ne 2 ] && break
  done
  if [ $rc -eq 2 ]; then
    echo "FAIL -np $np $*: imbalance_first < 1.3 in three runs"
  fi
  [ $rc -eq 0 ] || fail=1
}
check 1 1
check 2 1
check 2 2 --rank-policy refine
check 4 1
check 4 1 --place first
check 4 2 --rank-policy distributed --policy packdrop
exit $fail
