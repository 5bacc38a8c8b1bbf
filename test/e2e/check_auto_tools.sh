#!/usr/bin/env bash
# check_auto_tools.sh — auto's offline tools (tools/auto). train.py labels its rows in the simulator
# that steals unless told --no-steal, and says which: on the same seeded workloads the rows' times
# differ between the two, and the decision rows of the first window (the same state in both) are
# as many. evaluate.py --bench ranks auto by the raw medians and, paired, within each repeat: a
# repeat ten times slower than the others, in which auto was slower than in the rest, moves the
# raw ranking (auto third) but not the paired one (auto first of the fixed policies in two
# repeats of three); auto 5 % slower in every repeat stays outside 1.03 x either way. evaluate.py
# --ranks counts each variant's fastest-or-second workloads across two designed matrices and how
# the first one's picks fare in the second. evaluate.py --sim --against compares each policy's
# simulated totals with another build's (a wrapper here).
#   check_auto_tools.sh LBOMP_SIM SOURCE_ROOT
set -euo pipefail
sim=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
train=(python3 "$root/tools/auto/train.py" --sim "$sim" --runs 24 --seed 3 --no-traces --no-write)
"${train[@]}" --data "$tmp/steal.jsonl" > "$tmp/steal.log"
"${train[@]}" --no-steal --data "$tmp/plain.jsonl" > "$tmp/plain.log"
grep -q "(stealing modelled, lbomp-sim --steal 0.25)" "$tmp/steal.log" ||
        { echo "FAIL: train.py does not say it modelled stealing"; cat "$tmp/steal.log"; exit 1; }
grep -q "(no stealing)" "$tmp/plain.log" ||
        { echo "FAIL: train.py --no-steal does not say so"; cat "$tmp/plain.log"; exit 1; }
grep -q "^kept: " "$tmp/steal.log" || { echo "FAIL: train.py kept no model"; exit 1; }
python3 - "$tmp/steal.jsonl" "$tmp/plain.jsonl" <<'PY'
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
first = lambda rows: sorted((r["run"], r["f"]) for r in rows if r["lb_step"] == 0)
fa, fb = first(a), first(b)
assert [r for r, _ in fa] == [r for r, _ in fb], "the first windows' rows differ in number"
ta = {(r["run"], r["lb_step"]): r["t"] for r in a}
tb = {(r["run"], r["lb_step"]): r["t"] for r in b}
same = [k for k in ta if k in tb and ta[k] == tb[k]]
assert len(same) < len(ta), "stealing modelled changed no simulated time"
print(f"train.py: {len(a)} rows with stealing, {len(b)} without; {len(ta) - len(same)} with other times")
PY
mkdir -p "$tmp/bench"
python3 - "$tmp/bench" <<'PY'
import csv, json, os, sys
d = sys.argv[1]
w1 = {0: dict(auto=1.00, refine=1.02, greedy=1.03, none=1.5),
      1: dict(auto=1.05, refine=1.00, greedy=1.01, none=1.5),
      2: dict(auto=10.0, refine=10.3, greedy=10.4, none=15.0)}
w2 = {r: dict(auto=1.05 * f, refine=1.00 * f, greedy=1.01 * f, none=1.5 * f)
      for r, f in enumerate((1, 1.3, 0.9))}
rows = [dict(workload=w, variant=v, repeat=r, total_s=x, checksum="7")
        for w, data in (("spell", w1), ("slow", w2)) for r, t in data.items() for v, x in t.items()]
with open(os.path.join(d, "runs.csv"), "w", newline="") as f:
    wr = csv.DictWriter(f, fieldnames=list(rows[0]))
    wr.writeheader()
    wr.writerows(rows)
json.dump({}, open(os.path.join(d, "meta.json"), "w"))
PY
out=$(python3 "$root/tools/auto/evaluate.py" --bench "$tmp/bench")
expect() {
        grep -qF -- "$1" <<< "$out" || { echo "FAIL: evaluate.py: no '$1' in:"; echo "$out"; exit 1; }
}
expect "| spell | 1.05 | 1.02 | 1.03 | 1.5 | refine | 1.029 | 3 of 4 |"
expect "fastest or second on 0 of 2 (0 %); within 1.03 x the best fixed policy on 1 of 2; above it: slow (1.050)"
expect "auto fastest or second on 1 of 2, within 1.03 x the best fixed policy on 1 of 2; above it: slow (1.050, refine)"
echo "evaluate.py: raw and paired ranks as designed"
# --ranks: two designed matrices of three workloads. In the first, refine is fastest on all three
# and greedy second; in the second refine stays fastest on one, falls to third on another, and
# auto, third before, is fastest on two. Each variant's count, the table and the carry-over follow.
for m in 1 2; do mkdir -p "$tmp/m$m"; done
python3 - "$tmp" <<'PY'
import csv, os, sys
d = sys.argv[1]
mats = {1: {w: dict(refine=1.0, greedy=1.1, auto=1.2, none=1.3) for w in ("a", "b", "c")},
        2: {"a": dict(refine=1.0, greedy=1.1, auto=1.2, none=1.3),
            "b": dict(auto=1.0, greedy=1.1, refine=1.2, none=1.3),
            "c": dict(auto=1.0, refine=1.1, greedy=1.2, none=1.3)}}
for m, works in mats.items():
    rows = [dict(workload=w, variant=v, repeat=r, total_s=x * (1 + 0.01 * r), checksum="7")
            for w, t in works.items() for r in range(3) for v, x in t.items()]
    rows.append(dict(workload="a", variant="omp-static", repeat=0, total_s=0.1, checksum="7"))
    with open(os.path.join(d, f"m{m}", "runs.csv"), "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(rows[0]))
        wr.writeheader()
        wr.writerows(rows)
PY
out=$(python3 "$root/tools/auto/evaluate.py" --ranks "$tmp/m1" "$tmp/m2")
expect "3 workloads in all 2 matrices, 4 lbomp variants in all of them; fastest or second by chance alone: 1.5 workloads each"
expect "$tmp/m1: fastest or second, by the medians (paired within each repeat): auto 0 (0), greedy 3 (3), none 0 (0), refine 3 (3); the most: refine, 3 of 3"
expect "$tmp/m2: fastest or second, by the medians (paired within each repeat): auto 2 (2), greedy 2 (2), none 0 (0), refine 2 (2); the most: refine, 2 of 3"
expect "| b | refine, greedy | auto, greedy |"
expect "matrix 1 -> 2: its fastest variant fastest again on 1 of 3, fastest or second on 2 of 3"
echo "evaluate.py --ranks: counts, table and carry-over as designed"
# --sim --against OTHER: each policy's totals against another build's lbomp-sim. OTHER here is a
# wrapper around the same simulator that reports greedy twice as long: greedy then reads 0.500 and
# faster on every workload, the others 1.000 and neither.
mkdir -p "$tmp/this/tools" "$tmp/other/tools"
ln -s "$sim" "$tmp/this/tools/lbomp-sim"
cat > "$tmp/other/tools/lbomp-sim" <<EOF
#!/usr/bin/env bash
"$sim" "\$@" | python3 -c '
import json, sys
for line in sys.stdin:
    d = json.loads(line)
    if d["policy"] == "greedy":
        d["total_s"] *= 2
    print(json.dumps(d))'
EOF
chmod +x "$tmp/other/tools/lbomp-sim"
out=$(python3 "$root/tools/auto/evaluate.py" --sim 6 --build "$tmp/this" --against "$tmp/other")
expect "greedy 0.500 (0 / 6)"
expect "none 1.000 (0 / 0)"
expect "refine 1.000 (0 / 0)"
echo "evaluate.py --against: each policy against the other build as designed"
