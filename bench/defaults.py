#!/usr/bin/env python3
"""bench/defaults.py — what the default configuration does against OpenMP, and the alternatives it
was chosen over (standard library only).

Every workload of bench/run (runner.py's WORKLOADS) runs under a few lbomp configurations — the
default (no LBOMP_* variable set, no --policy, no --period: exactly what a user gets) and the same
with one variable changed — and under each OpenMP baseline, interleaved (every variant of every
workload once per repeat, in the same order) and repeated. Prints one Markdown table: median total
seconds per variant and each lbomp variant's ratio to the best OpenMP baseline of that workload,
and checks that all checksums of a workload are equal. The raw runs go to --csv when given.

  python3 bench/defaults.py --build build --repeats 5 --quick \\
      --variants default,LBOMP_STEAL=off,LBOMP_STEAL=all

A variant `build:DIR` is the default configuration of another build folder (DIR/bench/...), to
compare two commits interleaved:

  git worktree add --detach /tmp/start <commit> && (cd /tmp/start && meson setup build && ninja -C build)
  python3 bench/defaults.py --build build --variants default,build:/tmp/start/build
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runner import BASELINES, WORKLOADS  # noqa: E402


def strip_period(args):
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a == "--period":
            skip = True
            continue
        out.append(a)
    return out


def variant_env(v):
    """'default' or 'VAR=value[+VAR=value]': the LBOMP_* environment of a variant."""
    if v == "default" or v.startswith("build:"):
        return {}
    env = {}
    for kv in v.split("+"):
        k, _, val = kv.partition("=")
        if not k.startswith("LBOMP_") or not val:
            sys.exit(f"bench/defaults.py: variant {v!r}: expected default or LBOMP_X=value[+...]")
        env[k] = val
    return env


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="the workloads' --quick sizes")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", type=lambda s: s.split(","), help="comma-separated workloads")
    ap.add_argument("--variants", default="default,LBOMP_STEAL=off,LBOMP_STEAL=all",
                    help="comma-separated: default, or LBOMP_X=value[+LBOMP_Y=value]")
    ap.add_argument("--csv", help="write every run here")
    a = ap.parse_args()
    variants = a.variants.split(",")
    names = [w for w in WORKLOADS if not a.only or w in a.only]
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("LBOMP_")}
    rows = []
    total = a.repeats * len(names) * (len(variants) + len(BASELINES))
    done = 0
    for r in range(a.repeats):
        for w in names:
            binary, quick, full = WORKLOADS[w]
            wargs = (quick if a.quick else full).split()
            for v in variants + BASELINES:
                done += 1
                sys.stderr.write(f"\r[{done}/{total}] {w:18s} {v:30s}")
                sys.stderr.flush()
                cmd = [os.path.join(v[len("build:"):] if v.startswith("build:") else a.build,
                                    "bench", binary)]
                if v in BASELINES:
                    cmd += wargs + ["--baseline", v]
                    env = base_env
                else:
                    cmd += strip_period(wargs)
                    env = {**base_env, **variant_env(v)}
                cmd += ["--threads", str(a.threads), "--json"]
                p = subprocess.run(cmd, env=env, capture_output=True, text=True)
                if p.returncode != 0:
                    sys.exit(f"\nbench/defaults.py: FAILED ({p.returncode}): {' '.join(cmd)}\n"
                             f"{p.stderr}")
                d = json.loads(p.stdout.strip().splitlines()[-1])
                rows.append(dict(workload=w, variant=v, repeat=r, total_s=d["total_s"],
                                 checksum=d["checksum"], stolen=d.get("stolen", 0),
                                 migrations=d.get("migrations", 0),
                                 command=" ".join(cmd) if v in BASELINES else " ".join(
                                     [f"{k}={x}" for k, x in variant_env(v).items()] + cmd)))
    sys.stderr.write("\r" + " " * 80 + "\r")
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            wr = csv.DictWriter(f, fieldnames=list(rows[0]))
            wr.writeheader()
            wr.writerows(rows)
    med = lambda xs: statistics.median(xs)
    head = "| workload | best OpenMP | " + " | ".join(
        f"{v} s (× best)" for v in variants) + " | " + " | ".join(f"{b} s" for b in BASELINES) + " |"
    print(head)
    print("|" + "---|" * (2 + len(variants) + len(BASELINES)))
    bad = []
    for w in names:
        rs = [x for x in rows if x["workload"] == w]
        if len({x["checksum"] for x in rs}) != 1:
            bad.append(w)
        t = {v: med([x["total_s"] for x in rs if x["variant"] == v]) for v in variants + BASELINES}
        best = min(BASELINES, key=lambda b: t[b])
        cells = [f"{t[v]:.3f} ({t[v] / t[best]:.2f})" for v in variants]
        cells += [f"{t[b]:.3f}" for b in BASELINES]
        print(f"| {w} | {best} | " + " | ".join(cells) + " |")
    print(f"\n{a.repeats} interleaved repeats, medians, {a.threads} threads"
          f"{', quick sizes' if a.quick else ''}; checksums "
          f"{'all equal' if not bad else 'DIFFER in ' + ', '.join(bad)}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
