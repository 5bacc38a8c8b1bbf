#!/usr/bin/env python3
"""evaluate.py — auto against every fixed policy and the per-workload oracle (the fastest fixed
policy of that workload, by median), on bench workloads that auto's model never saw (it is
trained on lbomp-sim's synthetic workloads and three recorded runs outside this set: train.py's
TRACE_RUNS).

Reads a bench/run output folder (runs.csv, meta.json) and, with --extra, also runs the workloads
bench/run does not (churn; linkcell in its two forms) under every policy, interleaved (every
policy once per repeat, in an order turned by one place each repeat: the first run of a block
runs faster, bench/README *The first run of a block*). Prints a Markdown table: median total time
per workload and policy, the best fixed policy, auto's ratio to it, auto's rank among the lbomp
variants (fixed policies and auto), whether auto's checksum is none's; then how often auto was
fastest and second fastest, how often within 1.03 x the best fixed policy, the same two counts
paired within each repeat (each variant's time over that repeat's geometric mean, its median over
the repeats: a slow spell that stretches a whole repeat cancels out), and the geometric mean of
auto's ratio to each fixed policy.

  tools/auto/evaluate.py --bench DIR [--extra --build build --repeats 5] [--csv extra.csv]
  tools/auto/evaluate.py --sim N [--seed 7] [--build build] [--steal K] [--against OTHER]
  tools/auto/evaluate.py --ranks DIR[:EXTRA.csv] DIR2[:EXTRA2.csv] ...

--sim N: N synthetic workloads drawn as tools/auto/train.py draws them but from another seed
(none of them trained on), each run whole (200 time steps, LB period 10) by lbomp-sim --evolve
under every candidate policy and auto; the same counts against the per-workload oracle. With
--against OTHER (another build folder, e.g. of an earlier commit), also runs OTHER's lbomp-sim on
each workload and prints, per policy, the geometric mean of this build's total over OTHER's and
on how many workloads it is more than 1 % slower and faster.

--ranks: whether the ranks of the lbomp variants say anything on this machine. Each argument is a
bench/run folder of its own session (its runs.csv, or runs.csv.gz as bench/results/ranks keeps
three), with, after a colon, the CSV that --extra --csv kept in that session. Over the workloads
every matrix has, prints each variant's count of workloads on which it was fastest or second (by
the medians, and paired within each repeat as above), the two fastest of each workload in every
matrix, and, from one matrix to the next, on how many workloads the earlier one's fastest variant
was fastest or second again: a pick that knows the last matrix.
When no variant is fastest or second on much more than 2 / (variants) of the workloads, as by
chance, and the earlier matrix's picks fare no better in the next, the ranks are the noise's.
"""
import argparse
import csv
import gzip
import json
import math
import os
import random
import statistics
import subprocess
import sys

BASELINES = ("omp-static", "omp-dynamic", "omp-guided", "omp-tasks")


def policies_of(build):
    env = {k: v for k, v in os.environ.items() if not k.startswith("LBOMP_")}
    env["LBOMP_POLICY"] = "help"
    out = subprocess.run([os.path.join(build, "bench", "kneighbor")], env=env,
                         capture_output=True, text=True).stdout
    return [l.split()[0] for l in out.splitlines() if l.strip()]


def run_extra(build, repeats, policies):
    env0 = {k: v for k, v in os.environ.items() if not k.startswith("LBOMP_")}
    env0["OMP_NUM_THREADS"] = "2"
    works = {
        "churn": [os.path.join(build, "bench", "churn"), "--steps", "4000", "--block", "1000",
                  "--threads", "2", "--json"],
        "linkcell-for": [os.path.join(build, "bench", "linkcell"), "--form", "for", "--size",
                         "small", "--threads", "2", "--json"],
        "linkcell-tasks": [os.path.join(build, "bench", "linkcell"), "--form", "tasks", "--size",
                           "small", "--threads", "2", "--json"],
    }
    rows = []
    for r in range(repeats):
        for w, cmd in works.items():
            k = r % len(policies)
            for p in policies[k:] + policies[:k]:
                env = dict(env0, LBOMP_POLICY=p)
                out = subprocess.run(cmd, env=env, capture_output=True, text=True)
                if out.returncode != 0:
                    sys.exit(f"evaluate: {w} under {p} failed: {out.stderr.strip()[-400:]}")
                d = json.loads(out.stdout.strip().splitlines()[-1])
                t = d.get("total_s")
                if t is None:  # churn: both timed blocks
                    t = d["first_block_s"] + d["last_block_s"]
                rows.append({"workload": w, "variant": p, "repeat": r, "total_s": t,
                             "checksum": d.get("checksum", ""),
                             "lb_steps": d.get("lb_steps", ""),
                             "migrations": d.get("migrations", "")})
                print(f"\r  extra repeat {r + 1}/{repeats} {w:15s} {p:14s}", end="",
                      file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return rows


def rank_of(t, who="auto"):
    """who's rank among the variants timed in t: 1 + those strictly faster (a tie shares the
    rank: in the simulator auto and a fixed policy that make the same moves take the same time,
    to the last digit; a sort would put auto after them by the order of the list)."""
    return 1 + sum(1 for p, v in t.items() if p != who and v < t[who] * (1 - 1e-9))


def whole_repeats(vs, labels):
    """The repeats in which every variant of labels ran, each as {variant: total seconds} (a
    repeat ran every variant once, back to back, rotated)."""
    reps = {}
    for v in labels:
        for r in vs[v]:
            reps.setdefault(r["repeat"], {})[v] = float(r["total_s"])
    return [t for t in reps.values() if len(t) == len(labels)]


def paired_medians(rs_by_variant):
    """Each variant's median over the repeats of its time over that repeat's geometric mean of
    every variant's: a slow spell of the machine that stretches a whole repeat cancels out, which
    the medians of the raw times keep. Repeats that lack a variant are left out."""
    norm = {}
    for t in whole_repeats(rs_by_variant, list(rs_by_variant)):
        g = math.exp(sum(math.log(x) for x in t.values()) / len(t))
        for v, x in t.items():
            norm.setdefault(v, []).append(x / g)
    return {v: statistics.median(xs) for v, xs in norm.items()}


def runs_of(folder):
    """The rows of a bench/run folder's runs.csv, or of runs.csv.gz when only that is kept (as
    bench/results/ranks keeps them)."""
    path = os.path.join(folder, "runs.csv")
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        with gzip.open(path + ".gz", "rt") as f:
            return list(csv.DictReader(f))
    with open(path) as f:
        return list(csv.DictReader(f))


def lbomp_rows(rows):
    """{workload: {variant: [rows]}} of the lbomp variants (no baseline, no default+ variant)."""
    by = {}
    for r in rows:
        v = r["variant"]
        if v in BASELINES or v.startswith("default") or "+" in v:
            continue
        by.setdefault(r["workload"], {}).setdefault(v, []).append(r)
    return by


def ranks(specs):
    """--ranks: the fastest two of every workload, matrix by matrix (module docstring)."""
    mats = []
    for spec in specs:
        folder, _, extra = spec.partition(":")
        rows = runs_of(folder)
        if extra:
            rows += list(csv.DictReader(open(extra)))
        mats.append((spec, lbomp_rows(rows)))
    works = sorted(set.intersection(*(set(by) for _, by in mats)))
    if not works:
        sys.exit("evaluate: --ranks: no workload is in every matrix")
    variants = sorted(set.intersection(*(set(by[w]) for _, by in mats for w in works)))
    top = []  # per matrix: {workload: variants by median, fastest first}
    print(f"{len(works)} workloads in all {len(mats)} matrices, {len(variants)} lbomp variants in "
          f"all of them; fastest or second by chance alone: {2 / len(variants) * len(works):.1f} "
          f"workloads each")
    for spec, by in mats:
        raw, paired = {v: 0 for v in variants}, {v: 0 for v in variants}
        order = {}
        for w in works:
            vs = {v: by[w][v] for v in variants}
            med = {v: statistics.median(float(r["total_s"]) for r in rs) for v, rs in vs.items()}
            pm = paired_medians(vs)
            order[w] = sorted(variants, key=lambda v: (med[v], v))
            for v in variants:
                raw[v] += rank_of(med, v) <= 2
                paired[v] += v in pm and rank_of(pm, v) <= 2
        top.append(order)
        most = max(variants, key=lambda v: (raw[v], v))
        print(f"{spec}: fastest or second, by the medians (paired within each repeat): "
              + ", ".join(f"{v} {raw[v]} ({paired[v]})" for v in variants)
              + f"; the most: {most}, {raw[most]} of {len(works)}")
    print()
    print("| workload | " + " | ".join(f"matrix {i + 1}" for i in range(len(mats))) + " |")
    print("|---|" + "---|" * len(mats))
    for w in works:
        print(f"| {w} | " + " | ".join(", ".join(t[w][:2]) for t in top) + " |")
    print()
    for i in range(1, len(mats)):
        again = sum(top[i][w].index(top[i - 1][w][0]) < 2 for w in works)
        same = sum(top[i][w][0] == top[i - 1][w][0] for w in works)
        print(f"matrix {i} -> {i + 1}: its fastest variant fastest again on {same} of {len(works)}, "
              f"fastest or second on {again} of {len(works)}")


def sim_totals(sim, args, pols):
    """{policy: total seconds} of one lbomp-sim --evolve run of every policy in pols."""
    out = subprocess.run([sim] + args + ["--policy", pols, "--json"], capture_output=True,
                         text=True)
    if out.returncode != 0:
        sys.exit(f"evaluate: {sim} {' '.join(args)}: {out.stderr.strip()}")
    return {d["policy"]: d["total_s"] for d in map(json.loads, out.stdout.splitlines())}


def simulate(a):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import train
    sim = os.path.join(a.build, "tools", "lbomp-sim")
    pols = "none,greedy,refine,hierarchical,smart,greedy-refine,greedy-comm,auto"
    n = fastest = second = within = 0
    against = {}  # policy: [log(this build's total / OTHER's)]
    behind = []  # where auto is neither fastest nor second: its time over the second fastest's
    ratios, worst = [], []
    kinds, pol_log, pol_top2 = {}, {}, {}
    for i, args in enumerate(train.workloads(a.sim, a.seed)):
        args = list(args)
        k = args.index("--time-steps")
        args[k + 1] = "200"
        if a.steal is not None:
            args += ["--steal", str(a.steal)]
        t = sim_totals(sim, args, pols)
        if a.against:
            o = sim_totals(os.path.join(a.against, "tools", "lbomp-sim"), args, pols)
            for p, v in o.items():
                if v > 0 and t.get(p, 0) > 0:
                    against.setdefault(p, []).append(math.log(t[p] / v))
        fixed = {p: v for p, v in t.items() if p != "auto"}
        best = min(fixed.values())
        rank = rank_of(t)
        r = t["auto"] / best
        kind = args[args.index("--evolve") + 1]
        kinds.setdefault(kind, []).append(r)
        n += 1
        fastest += rank == 1
        second += rank == 2
        within += r <= 1.03
        if rank > 2:
            behind.append(t["auto"] / sorted(t.values())[1])
        ratios.append(r)
        worst.append((r, kind, " ".join(args[:8])))
        for p, v in t.items():  # every variant, to set auto against each fixed policy
            pol_log[p] = pol_log.get(p, 0.0) + math.log(v / best)
            pol_top2[p] = pol_top2.get(p, 0) + (rank_of(t, p) <= 2)
    gm = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
    how = "" if a.steal is None else f", stealing modelled (a stolen task {1 + a.steal:g} x)"
    print(f"simulated, {n} workloads not trained on (seed {a.seed}{how}): auto fastest on {fastest}, "
          f"second on {second} ({(fastest + second) / n * 100:.0f} %), within 1.03 x the "
          f"per-workload oracle on {within} ({within / n * 100:.0f} %); geometric mean of auto / "
          f"oracle {gm:.3f}")
    for kind, rs in sorted(kinds.items()):
        g = math.exp(sum(math.log(x) for x in rs) / len(rs))
        print(f"  {kind:8s} {len(rs):3d} workloads: auto / oracle geometric mean {g:.3f}, "
              f"worst {max(rs):.3f}")
    worst.sort(reverse=True)
    print("  worst: " + "; ".join(f"{r:.2f} ({k}: {c})" for r, k, c in worst[:3]))
    if behind:
        print(f"  where auto is neither ({len(behind)}): within 0.5 % of the second fastest on "
              f"{sum(x <= 1.005 for x in behind)}, within 2 % on {sum(x <= 1.02 for x in behind)}; "
              f"median {statistics.median(behind):.4f} x the second")
    print("  every variant, geometric mean over the oracle / fastest or second (ties share the "
          "rank): " + ", ".join(f"{p} {math.exp(pol_log[p] / n):.3f} / "
                                f"{pol_top2[p] / n * 100:.0f} %" for p in pol_log))
    if against:
        print(f"  against {a.against}, this build's total over its, geometric mean (workloads more "
              "than 1 % slower / faster): " + ", ".join(
                  f"{p} {math.exp(sum(v) / len(v)):.3f} ({sum(x > math.log(1.01) for x in v)} / "
                  f"{sum(x < -math.log(1.01) for x in v)})" for p, v in against.items()))


def mann_whitney_p(a, b):
    """Two-sided p-value of the Mann-Whitney U test that samples a and b come from one
    distribution (normal approximation with continuity correction; ties share their ranks)."""
    n, m = len(a), len(b)
    if n < 2 or m < 2:
        return float("nan")
    pooled = sorted([(x, 0) for x in a] + [(x, 1) for x in b])
    ranks, i = [0.0] * len(pooled), 0
    while i < len(pooled):
        j = i
        while j + 1 < len(pooled) and pooled[j + 1][0] == pooled[i][0]:
            j += 1
        for k in range(i, j + 1):
            ranks[k] = (i + j) / 2 + 1
        i = j + 1
    u = sum(r for r, (_, g) in zip(ranks, pooled) if g == 0) - n * (n + 1) / 2
    mu, sd = n * m / 2, math.sqrt(n * m * (n + m + 1) / 12)
    z = (abs(u - mu) - 0.5) / sd
    return max(0.0, min(1.0, math.erfc(max(z, 0) / math.sqrt(2))))


def selection_p(vs, fixed, n_perm=2000, seed=1):
    """One-sided p-value that auto's median over the fastest fixed policy's, the fastest chosen
    after the fact, is as large as measured if every variant were the same: the variants' labels
    are shuffled within each repeat (a repeat ran every variant once, interleaved), the ratio taken
    again each time. Unlike Mann-Whitney against the best, it counts the picking of the best of
    nine, which alone makes auto look slower than it. nan without auto or a fixed policy."""
    labels = ["auto"] + [p for p in fixed if p in vs]
    if "auto" not in vs or len(labels) < 2:
        return float("nan")
    blocks = whole_repeats(vs, labels)
    if len(blocks) < 3:
        return float("nan")

    def stat(assign):
        med = [statistics.median(col) for col in zip(*assign)]
        return med[0] / min(med[1:])

    rows = [[b[v] for v in labels] for b in blocks]
    obs = stat(rows)
    rng = random.Random(seed)
    hits = 0
    for _ in range(n_perm):
        shuffled = [rng.sample(row, len(row)) for row in rows]
        hits += stat(shuffled) >= obs
    return (1 + hits) / (1 + n_perm)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", help="a bench/run output folder")
    ap.add_argument("--extra", action="store_true", help="also run churn and linkcell")
    ap.add_argument("--build", default="build")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--csv", help="keep (or, without --extra, read) the extra runs here")
    ap.add_argument("--sim", type=int, default=0)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--steal", type=float, default=None,
                    help="with --sim: model the runtime's stealing (lbomp-sim --steal K, a stolen "
                         "task costing 1 + K times)")
    ap.add_argument("--against", help="with --sim: another build folder whose lbomp-sim runs the "
                                      "same workloads, each policy's totals compared")
    ap.add_argument("--ranks", nargs="+", metavar="DIR[:EXTRA.csv]",
                    help="bench/run folders of several sessions: how the ranks hold between them")
    a = ap.parse_args()
    if a.ranks:
        return ranks(a.ranks)
    if a.sim:
        return simulate(a)
    rows = []
    meta = {}
    if a.bench:
        meta = json.load(open(os.path.join(a.bench, "meta.json")))
        rows = runs_of(a.bench)
    if a.extra:
        load0 = os.getloadavg()
        extra = run_extra(a.build, a.repeats, policies_of(a.build))
        load1 = os.getloadavg()
        print(f"extra runs: load average {load0[0]:.2f} before, {load1[0]:.2f} after",
              file=sys.stderr)
        if a.csv:
            with open(a.csv, "w", newline="") as f:
                wr = csv.DictWriter(f, fieldnames=list(extra[0]))
                wr.writeheader()
                wr.writerows(extra)
        rows += extra
    elif a.csv:
        rows += list(csv.DictReader(open(a.csv)))
    by = lbomp_rows(rows)
    pols = []
    for w in by.values():
        for v in w:
            if v not in pols:
                pols.append(v)
    fixed = [p for p in pols if p != "auto"]
    print("| workload | " + " | ".join(pols)
          + " | best fixed | auto / best | auto's rank | p (auto = best) | p (best of all picked) "
          "| checksum = none |")
    print("|---|" + "---|" * (len(pols) + 6))
    n = fastest = second = within = slower = slower_sel = 0
    pair_top2 = pair_within = 0
    pair_misses = []
    ratios = {p: [] for p in fixed}
    misses = []
    for w, vs in by.items():
        if "auto" not in vs:
            continue
        med = {v: statistics.median(float(r["total_s"]) for r in rs) for v, rs in vs.items()}
        best = min(fixed, key=lambda p: med.get(p, math.inf))
        rank = rank_of(med)
        ratio = med["auto"] / med[best]
        # whether auto's runs and the best fixed policy's differ beyond the noise of their repeats
        pv = mann_whitney_p([float(r["total_s"]) for r in vs["auto"]],
                            [float(r["total_s"]) for r in vs[best]])
        slower += ratio > 1 and pv < 0.05
        ps = selection_p(vs, fixed)
        slower_sel += ratio > 1 and ps < 0.05
        cs = {r["checksum"] for r in vs["auto"]} | {r["checksum"] for r in vs.get("none", [])}
        same = "yes" if len(cs) <= 1 else "NO"
        n += 1
        fastest += rank == 1
        second += rank == 2
        within += ratio <= 1.03
        if ratio > 1.03:
            misses.append(f"{w} ({ratio:.3f})")
        for p in fixed:
            if p in med:
                ratios[p].append(med["auto"] / med[p])
        pm = paired_medians(vs)
        if "auto" in pm and len(pm) > 1:
            pbest = min((p for p in pm if p != "auto"), key=pm.get)
            pair_top2 += rank_of(pm) <= 2
            pair_within += pm["auto"] <= 1.03 * pm[pbest]
            if pm["auto"] > 1.03 * pm[pbest]:
                pair_misses.append(f"{w} ({pm['auto'] / pm[pbest]:.3f}, {pbest})")
        cells = " | ".join(f"{med[p]:.4g}" if p in med else "-" for p in pols)
        print(f"| {w} | {cells} | {best} | {ratio:.3f} | {rank} of {len(med)} | {pv:.2f} | "
              f"{ps:.3f} | {same} |")
    print()
    if meta:
        print(f"bench/run: {meta.get('cmdline')}, {meta.get('date')}, load average "
              f"{meta.get('load_start', 0):.2f} at start, {meta.get('load_end', 0):.2f} at end, "
              f"{meta.get('repeats')} repeats")
    print(f"auto fastest on {fastest} of {n} workloads, second on {second}: fastest or second on "
          f"{fastest + second} of {n} ({(fastest + second) / max(n, 1) * 100:.0f} %); within "
          f"1.03 x the best fixed policy on {within} of {n}"
          + (f"; above it: {', '.join(misses)}" if misses else ""))
    print(f"auto slower than the best fixed policy beyond the noise of the repeats (Mann-Whitney, "
          f"p < 0.05, against the best chosen after the fact) on {slower} of {n}; were all "
          f"{len(pols)} variants the same, auto would be fastest or second on "
          f"{200 / max(len(pols), 1):.0f} % of the workloads by chance; counting the picking of "
          f"the best (labels shuffled within each repeat, 2,000 times), slower beyond the noise on "
          f"{slower_sel} of {n}")
    print(f"paired within each repeat (each variant's time over the geometric mean of the repeat's "
          f"variants, its median over the repeats): auto fastest or second on {pair_top2} of {n}, "
          f"within 1.03 x the best fixed policy on {pair_within} of {n}"
          + (f"; above it: {', '.join(pair_misses)}" if pair_misses else ""))
    gm = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")
    print("geometric mean of auto's time over each fixed policy's: "
          + ", ".join(f"{p} {gm(ratios[p]):.3f}" for p in fixed))


if __name__ == "__main__":
    main()
