#!/usr/bin/env python3
"""bench/defaults.py — what the default configuration does against OpenMP, and the alternatives it
was chosen over (standard library only).

Every workload of bench/run (runner.py's WORKLOADS) runs under a few lbomp configurations — the
default (no LBOMP_* variable set, no --policy, no --period: exactly what a user gets) and the same
with one variable changed — and under each OpenMP baseline, interleaved (every variant of every
workload once per repeat, in an order turned by one place each repeat) and repeated. Prints one
Markdown table: median total seconds per variant and each lbomp variant's ratio to the best
OpenMP baseline of that workload, and checks that all checksums of a workload are equal. The raw
runs go to --csv when given.

  python3 bench/defaults.py --build build --repeats 5 --quick \\
      --variants default,LBOMP_STEAL=off,LBOMP_STEAL=all

--metric step compares each run's median step instead of its total: the total of a short run
includes its first steps, which first-touch the memtasks' arrays (mem-cluster-l3: 83 µs a step on
average against a 68.5 µs median), and that part's noise decides many orderings; the median step
leaves it out, and with it the LB steps and the first window's imbalance, so it says what the
steady state costs, not what the run does.

With --by-face, `bench/l2share` (0.1 s: whether the two CPUs now share their caches; ratio below
2 "near", above "far", bench/README *The two faces*) runs before every workload's block of runs
and after the last, and one more table per face keeps each workload's blocks that began and ended
in that face (so a repeat whose face changed halfway still counts for the workloads it ran whole
in one face).

For the first variant each table also gives issue 12's target for the workload (≤ 1.00 × the best
OpenMP schedule, ≤ 1.02 × on the balanced ones, ≤ 0.90 × on the imbalanced memory-owning ones), a
95 % interval of the ratio (the repeats resampled 2,000 times, the best schedule picked anew each
time) and a verdict: met, above it within the noise (the interval reaches the target), or missed.
--from CSV prints the tables of runs kept with --csv, without running anything.

A variant `build:DIR` is the default configuration of another build folder (DIR/bench/...), to
compare two commits interleaved:

  git worktree add --detach /tmp/start <commit> && (cd /tmp/start && meson setup build && ninja -C build)
  python3 bench/defaults.py --build build --variants default,build:/tmp/start/build
"""
import argparse
import csv
import json
import os
import random
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runner import BALANCED, BASELINES, WORKLOADS, probe, rotated  # noqa: E402


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


def l2probe(a):
    """bench/l2share's ratio (lines another CPU wrote against one's own), None without it."""
    exe = os.path.join(a.build, "bench", "l2share")
    if not os.path.exists(exe):
        return None
    p = subprocess.run([exe], capture_output=True, text=True)
    m = re.search(r"ratio ([0-9.]+)", p.stdout)
    return float(m.group(1)) if p.returncode == 0 and m else None


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
    ap.add_argument("--metric", choices=["total", "step"], default="total",
                    help="what the tables compare: each run's total seconds (default), or its "
                    "median step, which leaves out the first steps' page faults and the LB steps")
    ap.add_argument("--by-face", action="store_true",
                    help="also one table per face: each workload's blocks of runs whose l2share "
                    "probes before and after agree (near < 2 ≤ far)")
    ap.add_argument("--from", dest="src", metavar="CSV",
                    help="no run: the tables of runs kept before with --csv (--variants, --only "
                    "and --metric still choose what is shown)")
    a = ap.parse_args()
    variants = a.variants.split(",")
    names = [w for w in WORKLOADS if not a.only or w in a.only]
    if a.src:
        sys.exit(from_csv(a, variants, names))
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("LBOMP_")}
    rows = []
    total = a.repeats * len(names) * (len(variants) + len(BASELINES))
    done = 0
    probes = [probe(a)]  # the machine's face (runner.probe) before repeat 1 and after each
    # with --by-face: l2share before the first workload's block and after each one
    l2 = [l2probe(a)] if a.by_face else []
    for r in range(a.repeats):
        for w in names:
            block = len(rows)
            binary, quick, full = WORKLOADS[w]
            wargs = (quick if a.quick else full).split()
            for pos, v in enumerate(rotated(variants + BASELINES, r)):
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
                rows.append(dict(workload=w, variant=v, repeat=r, position=pos, probe=probes[-1],
                                 l2_before=l2[-1] if l2 else None, l2_after=None,
                                 total_s=d["total_s"], step_s=d.get("step_s_median"),
                                 checksum=d["checksum"], stolen=d.get("stolen", 0),
                                 migrations=d.get("migrations", 0),
                                 command=" ".join(cmd) if v in BASELINES else " ".join(
                                     [f"{k}={x}" for k, x in variant_env(v).items()] + cmd)))
            if a.by_face:
                l2.append(l2probe(a))
                for x in rows[block:]:
                    x["l2_after"] = l2[-1]
        probes.append(probe(a))
        for x in rows:
            if x["repeat"] == r:
                x["probe_after"] = probes[-1]
    sys.stderr.write("\r" + " " * 80 + "\r")
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            wr = csv.DictWriter(f, fieldnames=list(rows[0]))
            wr.writeheader()
            wr.writerows(rows)
    bad = sorted({w for w in names
                  if len({x["checksum"] for x in rows if x["workload"] == w}) != 1})
    print(f"face probe (omp-dynamic ÷ omp-static median step, balanced 1 MiB memtask) before "
          f"repeat 1 and after each: {', '.join('–' if x is None else f'{x:.2f}' for x in probes)}"
          "\n")
    key = "total_s" if a.metric == "total" else "step_s"
    table(rows, names, variants, f"{a.repeats} interleaved repeats", key)
    if a.by_face:
        if None in l2:
            print("\n--by-face: bench/l2share did not run (not built?): no table per face")
        face = lambda x: None if x is None else "far" if x >= 2 else "near"
        seen = [x for x in l2 if x is not None]
        if seen:
            print(f"\nl2share ratio before each workload's block and after the last: "
                  f"{min(seen):.1f}–{max(seen):.1f} over {len(seen)} probes, "
                  f"{sum(x >= 2 for x in seen)} of them far (per-run values: --csv)")
        for f in ("near", "far"):
            rs = [x for x in rows if face(x["l2_before"]) == f and face(x["l2_after"]) == f]
            n = {w: len({x["repeat"] for x in rs if x["workload"] == w}) for w in names}
            if rs:
                print(f"\nface {f}:\n")
                table(rs, [w for w in names if n[w]], variants,
                      f"the blocks that began and ended in face {f}: "
                      f"{min(x for x in n.values() if x)}–{max(n.values())} repeats per workload "
                      f"(by workload: {', '.join(f'{w} {k}' for w, k in n.items())})", key)
    print(f"\n{a.threads} threads{', quick sizes' if a.quick else ''}; checksums "
          f"{'all equal' if not bad else 'DIFFER in ' + ', '.join(bad)}")
    sys.exit(1 if bad else 0)


def from_csv(a, variants, names):
    """The tables of a --csv file (a run of this script): 0, or 1 when checksums differ."""
    num = lambda x: float(x) if x not in ("", None, "None") else None
    with open(a.src, newline="") as f:
        rows = [dict(x, repeat=int(x["repeat"]), total_s=num(x["total_s"]),
                     step_s=num(x["step_s"]), l2_before=num(x["l2_before"]),
                     l2_after=num(x["l2_after"])) for x in csv.DictReader(f)]
    have = {x["variant"] for x in rows}
    missing = [v for v in variants + list(BASELINES) if v not in have]
    if missing:
        sys.exit(f"bench/defaults.py: {a.src} has no runs of {', '.join(missing)}")
    names = [w for w in names if any(x["workload"] == w for x in rows)]
    key = "total_s" if a.metric == "total" else "step_s"
    table(rows, names, variants, f"{a.src}: {len({x['repeat'] for x in rows})} repeats", key)
    if a.by_face:
        face = lambda x: None if x is None else "far" if x >= 2 else "near"
        for fc in ("near", "far"):
            rs = [x for x in rows if face(x["l2_before"]) == fc and face(x["l2_after"]) == fc]
            ws = [w for w in names if any(x["workload"] == w for x in rs)]
            if ws:
                print(f"\nface {fc}:\n")
                table(rs, ws, variants, f"the blocks that began and ended in face {fc}", key)
    bad = sorted({w for w in names if len({x["checksum"] for x in rows if x["workload"] == w}) > 1})
    print(f"\nchecksums {'all equal' if not bad else 'DIFFER in ' + ', '.join(bad)}")
    return 1 if bad else 0


def target(w):
    """Issue 12's bound on a workload's ratio to the best OpenMP schedule: 1.02 balanced, 0.90
    imbalanced with memory of its own, 1.00 the others (runner.BALANCED)."""
    return 1.02 if w in BALANCED else 0.90 if w.startswith("mem-") else 1.00


def ratio_interval(rs, v, key, n=2000, seed=1):
    """95 % interval of median(v) ÷ the least baseline median, by resampling the repeats (each
    repeat ran every variant once, interleaved, so a repeat's runs are drawn together) and picking
    the best baseline anew each time: the picking of the best after the fact is part of the noise.
    None with fewer than 3 repeats."""
    by = {}
    for x in rs:
        by.setdefault(x["repeat"], {}).setdefault(x["variant"], []).append(x[key])
    reps = [r for r in by if v in by[r] and all(b in by[r] for b in BASELINES)]
    if len(reps) < 3:
        return None
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        pick = [rng.choice(reps) for _ in reps]
        med = lambda name: statistics.median(y for r in pick for y in by[r][name])
        out.append(med(v) / min(med(b) for b in BASELINES))
    out.sort()
    return out[int(0.025 * n)], out[int(0.975 * n) - 1]


def table(rows, names, variants, what, key="total_s"):
    """One Markdown table of medians over rows of `key` (total_s: seconds a run; step_s: its
    median step, in µs): each variant's ratio to the best baseline; for the first variant, issue
    12's target and whether it holds: "met" (median ratio within it), "noise" (above it, but the
    95 % interval of ratio_interval reaches it), "missed" (the whole interval above it)."""
    med = lambda xs: statistics.median(xs)
    unit, scale, fmt = ("s", 1, ".3f") if key == "total_s" else ("µs a step", 1e6, ".1f")
    head = "| workload | best OpenMP | " + " | ".join(
        f"{v} {unit} (× best)" for v in variants) + f" | {variants[0]}: target, 95 % interval | " \
        + " | ".join(f"{b} {unit}" for b in BASELINES) + " |"
    print(head)
    print("|" + "---|" * (3 + len(variants) + len(BASELINES)))
    verdicts = {}
    for w in names:
        rs = [x for x in rows if x["workload"] == w]
        t = {v: med([x[key] * scale for x in rs if x["variant"] == v])
             for v in variants + BASELINES}
        best = min(BASELINES, key=lambda b: t[b])
        cells = [f"{t[v]:{fmt}} ({t[v] / t[best]:.2f})" for v in variants]
        r, lim, ci = t[variants[0]] / t[best], target(w), ratio_interval(rs, variants[0], key)
        verdict = "met" if r <= lim else "noise" if ci and ci[0] <= lim else "missed"
        verdicts[w] = verdict
        cells += [f"≤ {lim:.2f}: {verdict}" + (f", {ci[0]:.2f}–{ci[1]:.2f}" if ci else "")]
        cells += [f"{t[b]:{fmt}}" for b in BASELINES]
        print(f"| {w} | {best} | " + " | ".join(cells) + " |")
    print(f"\n{what}, medians; {variants[0]} against issue 12's targets: met on "
          f"{sum(x == 'met' for x in verdicts.values())} of {len(verdicts)}, above within the "
          f"noise on {sum(x == 'noise' for x in verdicts.values())}, missed beyond it on "
          f"{sum(x == 'missed' for x in verdicts.values())}"
          + (f" ({', '.join(w for w, x in verdicts.items() if x == 'missed')})"
             if "missed" in verdicts.values() else ""))

if __name__ == "__main__":
    main()
