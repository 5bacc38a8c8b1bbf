#!/usr/bin/env bash
# Trace round trip from a live run: kneighbor records every LB step with LBOMP_TRACE on a 2-node
# profile, lbomp-sim replays each record with the policy and seed recorded, and every replayed
# plan equals the recorded one (the migrations add up to what the live run reported). Then the
# same trace, cut short or with one byte changed, is refused with a message naming the file, the
# record and what is wrong; and an uncreatable LBOMP_TRACE fails lbomp_create with a message.
set -euo pipefail
kn=$1 sim=$2 profile=$3
tmp=$(mktemp -d /tmp/lbomp-check-trace-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
policies=$(LBOMP_POLICY=help "$kn" | awk '{print $1}')
echo "policies: " $policies
for p in $policies; do
  # auto decides from what the window measured beyond the snapshot (load decay, per-step
  # variability, the measured LB step cost), which the trace does not hold: its replay is not the
  # live plan. It is replayed for its plans' validity only.
  if [ "$p" = auto ]; then
    LBOMP_TRACE=$tmp/$p.trc LBOMP_TOPOLOGY=$profile LBOMP_POLICY=$p LBOMP_SEED=7 OMP_NUM_THREADS=4 \
      "$kn" --tasks 384 --k 2 --iters 40 --period 10 --load hotspot --work-us 10 --threads 4 \
      --json > "$tmp/$p.json"
    "$sim" --trace "$tmp/$p.trc" --policy "$p" --json > "$tmp/$p.replay"
    echo "auto: $(grep -c . "$tmp/$p.replay") LB steps replayed (valid plans; not compared)"
    continue
  fi
  LBOMP_TRACE=$tmp/$p.trc LBOMP_TOPOLOGY=$profile LBOMP_POLICY=$p LBOMP_SEED=7 OMP_NUM_THREADS=4 \
    "$kn" --tasks 384 --k 2 --iters 40 --period 10 --load hotspot --work-us 10 --threads 4 --json \
    > "$tmp/$p.json"
  "$sim" --trace "$tmp/$p.trc" --policy "$p" --verify --json > "$tmp/$p.replay"
  python3 - "$p" "$tmp/$p.json" "$tmp/$p.replay" "$(basename "$profile")" <<'PY'
import json, sys
pol, live_f, replay_f, topo = sys.argv[1:5]
live = json.loads(open(live_f).read().strip().splitlines()[-1])
lines = [json.loads(l) for l in open(replay_f) if l.strip()]
err = []
if live["lb_steps"] < 3: err.append(f"only {live['lb_steps']} LB steps ran")
if len(lines) != live["lb_steps"]: err.append(f"{len(lines)} records replayed, {live['lb_steps']} LB steps ran")
for i, d in enumerate(lines):
    if d.get("plan_equal") is not True: err.append(f"record {i}: plan_equal {d.get('plan_equal')}, {d.get('plan_diff')} tasks differ")
    if d["record"] != i or d["lb_step"] != i: err.append(f"record {i}: numbered {d['record']}, lb_step {d['lb_step']}")
    if (d["topology"], d["nodes"], d["cores"], d["tasks"]) != (topo, 2, 4, 384):
        err.append(f"record {i}: topology {d['topology']} nodes {d['nodes']} cores {d['cores']} tasks {d['tasks']}")
    if d["links"] != 384 * 2: err.append(f"record {i}: {d['links']} links, expected 768")
mig = sum(d["migrations"] for d in lines)
if mig != live["migrations"]: err.append(f"replayed plans move {mig} tasks, the live run moved {live['migrations']}")
print(f"{pol}: {len(lines)} LB steps replayed, {mig} migrations, every plan equal" if not err else f"{pol}: FAIL: " + "; ".join(err))
sys.exit(1 if err else 0)
PY
done

trc=$tmp/greedy.trc
size=$(stat -c %s "$trc")
expect_refusal() { # file, words the message must hold
  local f=$1; shift
  set +e
  msg=$("$sim" --trace "$f" --policy greedy --json 2>&1 >/dev/null)
  rc=$?
  set -e
  echo "refused (rc $rc): $msg"
  [ "$rc" -eq 2 ] || { echo "FAIL: exit $rc, expected 2"; exit 1; }
  for w in "$f" "$@"; do
    grep -qF -- "$w" <<<"$msg" || { echo "FAIL: message lacks '$w'"; exit 1; }
  done
}
head -c $((size - 100)) "$trc" > "$tmp/cut.trc"
expect_refusal "$tmp/cut.trc" "record 3 at byte" truncated
python3 - "$trc" "$tmp/flip.trc" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[len(b) // 2] ^= 0x40
open(sys.argv[2], "wb").write(b)
PY
expect_refusal "$tmp/flip.trc" "record" corrupt checksum
expect_refusal "$kn" "not an lbomp trace"

set +e
msg=$(LBOMP_TRACE=$tmp/no/such/dir/x.trc "$kn" --tasks 16 2>&1 >/dev/null)
rc=$?
set -e
echo "uncreatable trace (rc $rc): $msg"
[ "$rc" -ne 0 ] || { echo "FAIL: kneighbor ran without its trace"; exit 1; }
grep -qF "LBOMP_TRACE=" <<<"$msg" && grep -qF "$tmp/no/such/dir/x.trc" <<<"$msg" ||
  { echo "FAIL: message lacks the variable or the path"; exit 1; }
echo ok
