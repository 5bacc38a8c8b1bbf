#!/usr/bin/env python3
"""bench/runner.py — the matrix behind bench/run (standard library only).

Workloads × variants × repeats, interleaved (every variant of every workload once per repeat, in
an order turned by one place each repeat) so that the machine's drift hits them alike. Variants:
the library's default (`default`: no --policy, no LBOMP_* variable; `default+nosteal`:
LBOMP_STEAL=off), every policy the library lists (LBOMP_POLICY=help), the same with
LBOMP_STEAL=all for a few policies (when the library has stealing), and the OpenMP baselines;
every variant starts from an environment without LBOMP_* variables. Writes into the output folder:
  runs.csv     one row per run (every JSON key of the benchmark)
  summary.csv  medians per workload and variant, ratios to `none` and to the best OpenMP baseline
  results.md   the Markdown table, the targets of issues 6 and 12 and the overhead in ns per task
  reports/     the library's JSON report (or the baseline's windows) of each variant's last repeat
               (gzipped, *.json.gz, above 256 KiB)
  *.png        gnuplot plots: total time per variant, λ per window over the run, migrations and
               decision time per policy
"""
import argparse
import csv
import gzip
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time

BASELINES = ["omp-static", "omp-dynamic", "omp-guided", "omp-tasks"]

# name: (binary, args for --quick, args for the full configuration)
WORKLOADS = {
    "kneighbor-hotspot": ("kneighbor",
                          "--load hotspot --tasks 512 --iters 40 --period 10 --work-us 20",
                          "--load hotspot --tasks 512 --iters 60 --period 10 --work-us 50"),
    "kneighbor-drift": ("kneighbor",
                        "--load drift --drift-every 20 --tasks 512 --iters 60 --period 10 --work-us 15",
                        "--load drift --drift-every 20 --tasks 512 --iters 100 --period 10 --work-us 30"),
    "kneighbor-lbtest": ("kneighbor",
                         "--load lbtest --tasks 512 --iters 40 --period 10 --work-us 20",
                         "--load lbtest --tasks 512 --iters 60 --period 10 --work-us 50"),
    "lbtest-mesh2d": ("lbtest", "--topology mesh2d --size small --period 10",
                      "--topology mesh2d --size default --iters 60 --period 10"),
    "stencil3d": ("stencil3d", "--size small --iters 30 --period 10",
                  "--size default --period 10"),
    "leanmd": ("leanmd", "--size small --iters 40 --period 5",
               "--size default --iters 60 --period 5"),
    "overhead": ("kneighbor",
                 "--load uniform --k 0 --msg-bytes 8 --work-us 1 --tasks 4096 --iters 60 --period 10",
                 "--load uniform --k 0 --msg-bytes 8 --work-us 1 --tasks 4096 --iters 150 --period 10"),
}

# memtask: tasks that own memory (bench/README.md, "Workloads where data lives with tasks"). The
# working set selects the cache level: l2 = 1 MiB (half of a core's L2 per thread), l3 = 8 MiB,
# dram = 64 MiB (twice the L3). Steps are few enough that a busy machine, where every step's
# barrier may wait for a descheduled thread, does not stretch a run to minutes. No --period: the library's default is part of what
# is measured (the baselines' λ windows stay 10 steps).
MEM_LEVELS = {"l2": ("--size small", 1000), "l3": ("--size default", 300),
              "dram": ("--size large", 60)}  # full: the size's steps (5,000, 1,500, 200)
MEM_QUICK = {"mem-balanced-l2", "mem-hotspot-l2", "mem-cluster-l3", "mem-moving-l3"}
for _pat in ("balanced", "cluster", "hotspot", "drift", "moving"):
    for _lvl, (_size, _qi) in MEM_LEVELS.items():
        WORKLOADS[f"mem-{_pat}-{_lvl}"] = ("memtask", f"--load {_pat} {_size} --iters {_qi}",
                                            f"--load {_pat} {_size}")
for _pat in ("cluster", "moving"):
    WORKLOADS[f"mem-stencil-{_pat}-l3"] = ("memtask",
                                           f"--kernel stencil --load {_pat} --size default --iters 250",
                                           f"--kernel stencil --load {_pat} --size default --iters 1000")
# --quick runs the existing workloads and this short subset of the memtask ones
QUICK_SKIP = {w for w in WORKLOADS if w.startswith("mem-") and w not in MEM_QUICK}
# Workloads whose load is balanced (issue 12: the default must be ≤ 1.02 × the best OpenMP
# schedule there, ≤ 1.00 × on the others, ≤ 0.90 × on the imbalanced memory-owning ones).
BALANCED = {"stencil3d", "overhead"} | {w for w in WORKLOADS if w.startswith("mem-balanced-")}
STEAL_POLICIES = ["none", "greedy", "refine"]
REPORT_GZIP_BYTES = 256 << 10  # reports larger than this are kept gzipped (reports/*.json.gz)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def discover_policies(build):
    out = subprocess.run([os.path.join(build, "bench", "kneighbor")],
                         env={**os.environ, "LBOMP_POLICY": "help"},
                         capture_output=True, text=True, check=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def has_steal(build):
    r = subprocess.run([os.path.join(build, "bench", "kneighbor"), "--size", "tiny", "--json"],
                       env={**os.environ, "LBOMP_STEAL": "all"}, capture_output=True, text=True)
    return r.returncode == 0


def default_steal(build):
    """The library's default LBOMP_STEAL, from the report's first lines ('..., steal all')."""
    env = {k: v for k, v in os.environ.items() if k != "LBOMP_STEAL"}
    out = subprocess.run([os.path.join(build, "bench", "kneighbor"), "--size", "tiny"], env=env,
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        if ", steal " in line:
            return line.rsplit(", steal ", 1)[1].split()[0]
    return "off"


DEFAULT_STEAL = "off"  # set by main() from the library


def variants(policies, steal):
    """`default`: no --policy and no LBOMP_* variable, i.e. what a user gets as lbomp comes; every
    policy as configured by default; `default` and a few policies again with stealing switched the
    other way (+steal = LBOMP_STEAL=all when the default is off, +nosteal = LBOMP_STEAL=off
    otherwise; `none`, which steals nothing unless LBOMP_STEAL is set, gets +steal)."""
    alt = ("+steal", "all") if DEFAULT_STEAL == "off" else ("+nosteal", "off")
    v = [("default", "", {})]
    if steal:
        v += [("default" + alt[0], "", {"LBOMP_STEAL": alt[1]})]
    v += [(p, p, {}) for p in policies]
    if steal:  # `none` steals nothing unless told: its other way is always +steal
        for p in STEAL_POLICIES:
            a = ("+steal", "all") if p == "none" else alt
            if p in policies:
                v += [(p + a[0], p, {"LBOMP_STEAL": a[1]})]
    v += [(b, None, {}) for b in BASELINES]
    return v  # (label, policy ("" = the library's default) or None for a baseline, environment)


def rotated(order, r):
    """The variants of repeat r, turned by r places: every variant runs first in its workload's
    block as often as the others (a multiple of their number of repeats), since the first run of a
    block ran up to 1.10-1.20 × faster than the same binary after it (bench/README *The first run
    of a block*)."""
    k = r % len(order)
    return order[k:] + order[:k]


def fmt_s(s):
    s = int(s)
    return f"{s // 60}m{s % 60:02d}s"


def probe(a):
    """How much a task pays for changing core, now: median step of omp-dynamic ÷ omp-static on the
    balanced 1 MiB memtask. The host decides where our two vCPUs run and changes it while we run:
    about 1.2 when the two cores share their caches closely, 2.5 and more when a task that changes
    core fetches its data from far away. None if the probe cannot run."""
    med = {}
    for b in ("omp-static", "omp-dynamic"):
        cmd = [os.path.join(a.build, "bench", "memtask"), "--load", "balanced", "--size", "small",
               "--iters", "2000", "--threads", str(a.threads), "--json", "--baseline", b]
        env = {k: v for k, v in os.environ.items() if not k.startswith("LBOMP_")}
        p = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if p.returncode != 0:
            return None
        med[b] = json.loads(p.stdout.strip().splitlines()[-1])["step_s_median"]
    return round(med["omp-dynamic"] / med["omp-static"], 2)


def run_matrix(a, policies, vlist, outdir):
    os.makedirs(os.path.join(outdir, "reports"), exist_ok=True)
    rows = []
    a.probes = [probe(a)]  # before repeat 1, after each repeat
    names = [w for w in WORKLOADS if w in a.only] if a.only else \
        [w for w in WORKLOADS if not (a.quick and w in QUICK_SKIP)]
    total = a.repeats * len(names) * len(vlist)
    done, t0 = 0, time.time()
    for r in range(1, a.repeats + 1):
        for w in names:
            binary, quick, full = WORKLOADS[w]
            for pos, (label, policy, env) in enumerate(rotated(vlist, r)):
                done += 1
                el = time.time() - t0
                eta = el / (done - 1) * (total - done + 1) if done > 1 else 0
                sys.stderr.write(f"\r[{done:4d}/{total}] repeat {r}/{a.repeats}  {w:18s} {label:14s}"
                                 f" elapsed {fmt_s(el)}  eta {fmt_s(eta)}   ")
                sys.stderr.flush()
                cmd = [os.path.join(a.build, "bench", binary)] + (quick if a.quick else full).split()
                cmd += ["--threads", str(a.threads), "--json"]
                cmd += ["--policy", policy] if policy else [] if policy == "" else ["--baseline", label]
                report = os.path.join(outdir, "reports", f"{w}__{label}.json")
                if r == a.repeats:
                    cmd += ["--report-json", report]
                # every variant starts from no LBOMP_* variable: only its own are set
                e = {**{k: v for k, v in os.environ.items() if not k.startswith("LBOMP_")}, **env}
                started = time.time()
                p = subprocess.run(cmd, env=e, capture_output=True, text=True)
                if p.returncode != 0:
                    sys.stderr.write("\n")
                    log(f"bench/run: FAILED ({p.returncode}): {' '.join(cmd)}\n{p.stderr}")
                    sys.exit(1)
                if r == a.repeats and os.path.getsize(report) > REPORT_GZIP_BYTES:
                    # tens of thousands of short steps: keep the folder small enough to publish
                    with open(report, "rb") as fi, gzip.open(report + ".gz", "wb") as fo:
                        shutil.copyfileobj(fi, fo)
                    os.remove(report)
                d = json.loads(p.stdout.strip().splitlines()[-1])
                d.update(workload=w, variant=label, repeat=r, position=pos,
                         started=round(started, 1),
                         probe_before=a.probes[-1],
                         steal=env.get("LBOMP_STEAL", DEFAULT_STEAL),
                         command=" ".join(f"{k}={v}" for k, v in env.items()) +
                         (" " if env else "") + "bench/" + " ".join([binary] + cmd[1:]))
                rows.append(d)
        a.probes.append(probe(a))
        for d in rows:
            if d["repeat"] == r:
                d["probe_after"] = a.probes[-1]
    sys.stderr.write("\r" + " " * 100 + "\r")
    log(f"bench/run: {total} runs in {fmt_s(time.time() - t0)}")
    return rows


def med(xs):
    xs = [x for x in xs if x is not None and not (isinstance(x, float) and math.isnan(x))]
    return statistics.median(xs) if xs else None


def summarise(rows, vlist):
    out, bad = [], []
    for w in dict.fromkeys(r["workload"] for r in rows):
        rs = [r for r in rows if r["workload"] == w]
        sums = {r["checksum"] for r in rs}
        if len(sums) != 1:
            bad.append((w, sorted(sums)))
        t = {label: med([r["total_s"] for r in rs if r["variant"] == label]) for label, _, _ in vlist}
        best_b = min((t[b], b) for b in BASELINES if t.get(b) is not None)
        tm = {label: min([r["total_s"] for r in rs if r["variant"] == label], default=None)
              for label, _, _ in vlist}
        best_m = min(tm[b] for b in BASELINES if tm.get(b) is not None)
        for label, policy, env in vlist:
            vr = [r for r in rs if r["variant"] == label]
            if not vr:
                continue
            out.append(dict(
                workload=w, variant=label, kind="baseline" if policy is None else "lbomp",
                steal=env.get("LBOMP_STEAL", DEFAULT_STEAL), runs=len(vr), total_s=t[label], total_min_s=min(r["total_s"] for r in vr),
                step_s_median=med([r["step_s_median"] for r in vr]),
                ratio_none=t[label] / t["none"] if t.get("none") else None,
                ratio_best_omp=t[label] / best_b[0], best_omp=best_b[1],
                min_ratio_none=tm[label] / tm["none"] if tm.get("none") else None,
                min_ratio_best_omp=tm[label] / best_m,
                imbalance_first=med([r["imbalance_first"] for r in vr]),
                imbalance_last=med([r["imbalance_last"] for r in vr]),
                migrations=med([r["migrations"] for r in vr]),
                decision_s=med([r["decision_s"] for r in vr]),
                messages=med([r.get("messages", 0) for r in vr]),
                checksum_ok=len(sums) == 1,
                threads=vr[0]["threads"], tasks=vr[0]["tasks"], iters=vr[0]["iters"],
                command=vr[0]["command"]))
    return out, bad


def write_csv(path, rows, keys=None):
    keys = keys or list(dict.fromkeys(k for r in rows for k in r))
    with open(path, "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
        wr.writeheader()
        for r in rows:
            wr.writerow(r)


def g(x, f="{:.3f}"):
    return "–" if x is None else f.format(x)


def targets(summary, rows):
    """Issue 6's targets, each with the numbers it was judged on."""
    by = {(s["workload"], s["variant"]): s for s in summary}
    lines = []

    def lb_best(w, steal_only=False):
        c = [s for s in summary if s["workload"] == w and s["kind"] == "lbomp" and s["variant"] != "none"
             and (not steal_only or s["steal"] != "off")]
        return min(c, key=lambda s: s["total_s"]) if c else None

    b = lb_best("kneighbor-hotspot")
    if b:
        ok1, ok2 = b["ratio_none"] <= 0.80, b["ratio_best_omp"] <= 1.05
        bm = min((s for s in summary if s["workload"] == "kneighbor-hotspot" and s["kind"] == "lbomp"
                  and s["variant"] != "none"), key=lambda s: s["min_ratio_none"])
        lines.append(f"| kneighbor hotspot: best lbomp ≤ 0.80 × none | {b['variant']}: "
                     f"{b['ratio_none']:.2f} | {'met' if ok1 else 'MISSED'} | {bm['variant']}: "
                     f"{bm['min_ratio_none']:.2f} |")
        lines.append(f"| kneighbor hotspot: best lbomp ≤ 1.05 × best OpenMP ({b['best_omp']}) | "
                     f"{b['variant']}: {b['ratio_best_omp']:.2f} | {'met' if ok2 else 'MISSED'} | "
                     f"{bm['variant']}: {bm['min_ratio_best_omp']:.2f} |")
    b = lb_best("kneighbor-drift", steal_only=True) or lb_best("kneighbor-drift")
    if b:
        ok = b["ratio_best_omp"] <= 1.00
        bm = min((s for s in summary if s["workload"] == "kneighbor-drift" and s["kind"] == "lbomp"
                  and s["steal"] != "off"), key=lambda s: s["min_ratio_best_omp"], default=b)
        lines.append(f"| kneighbor drift: lbomp (stealing) ≤ 1.00 × best OpenMP ({b['best_omp']}) | "
                     f"{b['variant']}: {b['ratio_best_omp']:.2f} | {'met' if ok else 'MISSED'} | "
                     f"{bm['variant']}: {bm['min_ratio_best_omp']:.2f} |")
    n, s = by.get(("overhead", "none")), by.get(("overhead", "omp-static"))
    ns = None
    if n and s:
        # Judged on the median of total times like every other row; the ratios of the median
        # step and of the fastest run are given beside it because they resist the bursts of
        # other processes on a shared machine better.
        ratio = n["total_s"] / s["total_s"]
        per_task = lambda a, b: (a - b) * n["threads"] / n["tasks"] * 1e9
        ns = per_task(n["step_s_median"], s["step_s_median"])
        lines.append(f"| overhead: none ≤ 1.03 × omp-static (≈1 µs tasks) | total {ratio:.3f}; "
                     f"median step {n['step_s_median'] / s['step_s_median']:.3f} | "
                     f"{'met' if ratio <= 1.03 else 'MISSED'} | {n['total_min_s'] / s['total_min_s']:.3f} |")
        ns = (ns, per_task(n["total_s"] / n["iters"], s["total_s"] / s["iters"]),
              per_task(n["total_min_s"] / n["iters"], s["total_min_s"] / s["iters"]))
    return lines, ns


def targets_default(summary):
    """Issue 12's targets: the default configuration on every workload."""
    lines = []
    for s in summary:
        if s["variant"] != "default":
            continue
        w = s["workload"]
        mem = w.startswith("mem-")
        kind = ("balanced" if w in BALANCED else "imbalanced") + (", owns memory" if mem else "")
        target = 1.02 if w in BALANCED else 0.90 if mem else 1.00
        r = s["ratio_best_omp"]
        lines.append(f"| {w} | {kind} | {s['best_omp']} | {r:.2f} | ≤ {target:.2f} | "
                     f"{'met' if r <= target else 'MISSED'} | {s['min_ratio_best_omp']:.2f} |")
    return lines


def write_md(path, summary, bad, m):
    with open(path, "w") as f:
        f.write(f"# bench/run results\n\n")
        f.write(f"- date: {m['date']}; host: {m['host']}, {m['cores']} cores; {m['threads']} threads; "
                f"1-minute load average {m['load_start']:.2f} at the start, {m['load_end']:.2f} "
                f"at the end (above {m['cores']} means other processes competed for the cores)\n")
        f.write(f"- command: `{m['cmdline']}` ({m['repeats']} interleaved repeats, "
                f"{'quick' if m['quick'] else 'full'} configuration, {fmt_s(m['elapsed'])})\n")
        alt = "+steal = LBOMP_STEAL=all" if m.get("default_steal", "off") == "off" else \
            "+nosteal = LBOMP_STEAL=off"
        f.write(f"- policies found (LBOMP_POLICY=help): {', '.join(m['policies'])}; stealing "
                f"{'by default ' + m.get('default_steal', 'off') + '; ' + alt if m['steal'] else 'not available'}\n")
        f.write("- times are medians; `÷none` and `÷best omp` are ratios of medians (lower is better); "
                "`fastest ÷none` and `fastest ÷best omp` are the same ratios of each variant's fastest "
                "run, which resist bursts of other processes better\n")
        if m.get("probes"):
            f.write(f"- machine probe before repeat 1 and after each repeat (median step of "
                    f"omp-dynamic ÷ omp-static on `memtask --size small`: ≈1.2 when the cores share "
                    f"their caches closely, ≥ 2.5 when a task that changes core fetches its data from "
                    f"far away; the host changes it while we run): "
                    f"{', '.join('–' if x is None else f'{x:.2f}' for x in m['probes'])}\n")
        if bad:
            f.write(f"\n**CHECKSUMS DIFFER** in: {', '.join(w for w, _ in bad)}\n")
        else:
            f.write("- checksums: equal across every variant of every workload\n")
        names = list(dict.fromkeys(s["workload"] for s in summary))
        labels = list(dict.fromkeys(s["variant"] for s in summary))
        by = {(s["workload"], s["variant"]): s for s in summary}
        for title, key, fm in (("median total time ÷ best OpenMP baseline of the workload "
                                "(< 1: lbomp or that schedule beats every OpenMP schedule)",
                                "ratio_best_omp", "{:.2f}"),
                               ("median total time ÷ `none`", "ratio_none", "{:.2f}"),
                               ("λ of the last window (max/mean thread load; lbomp: by owner, "
                                "before stealing)", "imbalance_last", "{:.2f}")):
            f.write(f"\n**{title}**\n\n| workload | " + " | ".join(labels) + " |\n|---|"
                    + "---|" * len(labels) + "\n")
            for w in names:
                cells = []
                for v in labels:
                    x = by.get((w, v), {}).get(key)
                    c = g(x, fm)
                    if key == "ratio_best_omp" and x is not None and x == min(
                            by[(w, u)]["ratio_best_omp"] for u in labels if (w, u) in by):
                        c = f"**{c}**"
                    cells.append(c)
                f.write(f"| {w} | " + " | ".join(cells) + " |\n")
        lines, ns = targets(summary, None)
        f.write("\n## Targets (issue 6)\n\n| target | measured (medians) | verdict | fastest runs |\n"
                "|---|---|---|---|\n")
        f.write("\n".join(lines) + "\n")
        if ns is not None:
            f.write(f"\nlbomp's cost per task (policy none against omp-static, ≈1 µs tasks, "
                    f"(t_none − t_static) × threads / tasks per step): {ns[0]:.0f} ns from the "
                    f"median steps, {ns[1]:.0f} ns from the median totals, {ns[2]:.0f} ns from "
                    f"the fastest runs\n")
        lines12 = targets_default(summary)
        if lines12:
            f.write("\n## Targets (issue 12): the default configuration against the best OpenMP "
                    "schedule\n\n`default` = no `--policy`, no `LBOMP_*` variable. Target: ≤ 1.02 × "
                    "on balanced workloads, ≤ 1.00 × on imbalanced ones, ≤ 0.90 × on imbalanced "
                    "memory-owning ones (memtask).\n\n| workload | kind | best OpenMP | default "
                    "÷ best omp (medians) | target | verdict | fastest runs |\n"
                    "|---|---|---|---|---|---|---|\n")
            f.write("\n".join(lines12) + "\n")
        for w in dict.fromkeys(s["workload"] for s in summary):
            ss = [s for s in summary if s["workload"] == w]
            f.write(f"\n## {w}\n\n`{ss[0]['command'].split(' --policy')[0].split(' --baseline')[0]}`\n\n")
            f.write("| variant | total s | ÷none | ÷best omp | fastest ÷none | fastest ÷best omp "
                    "| median step ms | λ first | λ last | migrations | decision s |\n")
            f.write("|---|---|---|---|---|---|---|---|---|---|---|\n")
            best = min(ss, key=lambda s: s["total_s"])
            for s in ss:
                name = f"**{s['variant']}**" if s is best else s["variant"]
                f.write(f"| {name} | {g(s['total_s'])} | {g(s['ratio_none'], '{:.2f}')} | "
                        f"{g(s['ratio_best_omp'], '{:.2f}')} | {g(s['min_ratio_none'], '{:.2f}')} | "
                        f"{g(s['min_ratio_best_omp'], '{:.2f}')} | {g(s['step_s_median'] * 1e3, '{:.3f}')} | "
                        f"{g(s['imbalance_first'])} | "
                        f"{g(s['imbalance_last'])} | "
                        f"{'–' if s['kind'] == 'baseline' else int(s['migrations'])} | "
                        f"{'–' if s['kind'] == 'baseline' else g(s['decision_s'], '{:.2e}')} |\n")


def gp(script, outdir):
    if not shutil.which("gnuplot"):
        log("bench/run: gnuplot not found: plots skipped (scripts/packages.txt lists gnuplot-nox)")
        return
    p = subprocess.run(["gnuplot"], input=script, text=True, cwd=outdir, capture_output=True)
    if p.returncode != 0:
        log("bench/run: gnuplot failed:\n" + p.stderr)


def q(s):
    return '"' + s.replace('"', "'") + '"'


def plots(summary, outdir, policies):
    names = list(dict.fromkeys(s["workload"] for s in summary))
    os.makedirs(os.path.join(outdir, "data"), exist_ok=True)
    # 16 distinct colours: gnuplot's default cycle repeats after 8, and there can be 14 variants
    colours = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf', '#393b79', '#e7ba52', '#637939', '#843c39', '#7b4173', '#3182bd']
    head = ('set terminal pngcairo size 1000,520 font ",10"\nset grid ytics\nset key outside right\n'
            + "".join(f'set linetype {i + 1} lc rgb "{c}" pt {i % 13 + 1}\n' for i, c in enumerate(colours))
            + "set linetype cycle 16\n")
    # 1. total time per variant, one panel per workload, as ratios to none (absolute times differ)
    for w in names:
        ss = [s for s in summary if s["workload"] == w]
        dat = f"data/time_{w}.dat"
        with open(os.path.join(outdir, dat), "w") as f:
            for i, s in enumerate(ss):
                f.write(f"{i} {q(s['variant'])} {s['total_s']:.6f} {1 if s['kind'] == 'lbomp' else 2}\n")
        gp(head + f"""set output "time_{w}.png"
set title "{w}: total time per variant (median of repeats; lower is better)"
set ylabel "seconds"
set style fill solid 0.8 border -1
set boxwidth 0.7
set xtics rotate by -40
set yrange [0:*]
unset key
plot "{dat}" using 1:3:($4==1?0x3366cc:0xdd8833):xtic(2) with boxes lc rgb variable, \\
     "" using 1:3:(sprintf("%.2f",$3)) with labels offset 0,0.7 font ",8"
""", outdir)
    # 2. λ per window over the run, from each variant's report JSON (last repeat)
    for w in names:
        lines = []
        for s in summary:
            if s["workload"] != w:
                continue
            rp = os.path.join(outdir, "reports", f"{w}__{s['variant']}.json")
            if os.path.exists(rp):
                rep = json.load(open(rp))
            elif os.path.exists(rp + ".gz"):
                rep = json.load(gzip.open(rp + ".gz", "rt"))
            else:
                continue
            dat = f"data/lambda_{w}__{s['variant']}.dat"
            with open(os.path.join(outdir, dat), "w") as f:
                for win in rep.get("windows", []):
                    if win.get("imbalance") is not None:
                        f.write(f"{win['first_step'] + win['steps']} {win['imbalance']}\n")
            dash = "dt 2" if s["kind"] == "baseline" else "dt 1"
            lines.append(f'"{dat}" using 1:2 with linespoints {dash} title {q(s["variant"])}')
        if lines:
            gp(head + f"""set output "lambda_{w}.png"
set title "{w}: imbalance λ = max/mean thread load per window (LB after each window)"
set xlabel "step (end of window)"
set ylabel "λ"
set yrange [1:*]
plot {", ".join(lines)}
""", outdir)
    # 3. migrations and decision time per policy (lbomp variants), clustered by workload
    lb = [v for v in dict.fromkeys(s["variant"] for s in summary if s["kind"] == "lbomp")]
    with open(os.path.join(outdir, "data/policies.dat"), "w") as f:
        f.write("workload " + " ".join(q(v) for v in lb) + "\n")
        for w in names:
            m = {s["variant"]: s for s in summary if s["workload"] == w}
            f.write(q(w) + " " + " ".join(f"{m[v]['migrations']:.0f}" if v in m else "0" for v in lb) + "\n")
    with open(os.path.join(outdir, "data/decision.dat"), "w") as f:
        f.write("workload " + " ".join(q(v) for v in lb) + "\n")
        for w in names:
            m = {s["variant"]: s for s in summary if s["workload"] == w}
            f.write(q(w) + " " + " ".join(f"{m[v]['decision_s'] * 1e3 / max(1, m[v].get('lb_steps', 1)):.6f}"
                                          if v in m else "0" for v in lb) + "\n")
    hist = head + """set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set xtics rotate by -30
"""
    cols = " ".join(f'"{{f}}" using {i + 2}:xtic(1) title columnheader' for i in range(len(lb)))
    cols = ", ".join(f'"{{f}}" using {i + 2}:xtic(1) title columnheader' for i in range(len(lb)))
    gp(hist + f"""set output "migrations.png"
set title "tasks migrated per run (median), per policy"
set ylabel "migrations"
set logscale y
set yrange [0.5:*]
plot {cols.format(f='data/policies.dat')}
""", outdir)
    gp(hist + f"""set output "decision.png"
set title "decision time per LB step (median of runs), per policy"
set ylabel "milliseconds"
set logscale y
plot {cols.format(f='data/decision.dat')}
""", outdir)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True)
    ap.add_argument("--quick", action="store_true", help="smaller workloads, 3 repeats (< 10 min)")
    ap.add_argument("--repeats", type=int)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out")
    ap.add_argument("--only", type=lambda s: s.split(","), help="comma-separated workload names: "
                    + ", ".join(WORKLOADS))
    ap.add_argument("--variants", type=lambda s: s.split(","),
                    help="comma-separated variant labels to run (default: all), e.g. "
                    "default,default+nosteal,greedy,omp-static,omp-dynamic,omp-guided,omp-tasks")
    ap.add_argument("--replot", action="store_true",
                    help="run nothing: rebuild summary, table and plots from the output folder's "
                    "runs.csv and meta.json")
    a = ap.parse_args()
    if a.only:
        for w in a.only:
            if w not in WORKLOADS:
                ap.error(f"unknown workload '{w}'; valid: {', '.join(WORKLOADS)}")
    a.repeats = a.repeats or (3 if a.quick else 5)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    outdir = a.out or os.path.join(root, "bench", "results", "quick" if a.quick else "")
    os.makedirs(outdir, exist_ok=True)
    if a.replot:
        return report(outdir, *load_runs(outdir))
    global DEFAULT_STEAL
    policies = discover_policies(a.build)
    steal = has_steal(a.build)
    DEFAULT_STEAL = default_steal(a.build)
    vlist = variants(policies, steal)
    if a.variants:
        labels = [label for label, _, _ in vlist]
        for v in a.variants:
            if v not in labels:
                ap.error(f"unknown variant '{v}'; valid: {', '.join(labels)}")
        if not any(label in BASELINES for label in a.variants):
            ap.error("--variants needs at least one OpenMP baseline (ratios are to the best one)")
        vlist = [x for x in vlist if x[0] in a.variants]
    cmdline = "bench/run " + " ".join(sys.argv[3:])
    log(f"bench/run: policies {', '.join(policies)}; stealing {'yes' if steal else 'no'}; "
        f"{len(vlist)} variants × {len(a.only or WORKLOADS)} workloads × {a.repeats} repeats → {outdir}")
    t0 = time.time()
    a.load_start = os.getloadavg()[0]
    rows = run_matrix(a, policies, vlist, outdir)
    meta = dict(date=time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()), host=os.uname().nodename,
                cores=os.cpu_count(), threads=a.threads, load_start=a.load_start,
                load_end=os.getloadavg()[0], cmdline=cmdline.strip(), repeats=a.repeats,
                quick=a.quick, elapsed=time.time() - t0, policies=policies, steal=steal,
                default_steal=DEFAULT_STEAL, probes=a.probes,
                variants=[[l, p, e] for l, p, e in vlist])
    write_csv(os.path.join(outdir, "runs.csv"), rows)
    with open(os.path.join(outdir, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    report(outdir, rows, meta)


def load_runs(outdir):
    meta = json.load(open(os.path.join(outdir, "meta.json")))
    num = ("total_s step_s_median imbalance_first imbalance_last migrations decision_s messages "
           "lb_steps threads tasks iters checksum repeat").split()
    rows = []
    for r in csv.DictReader(open(os.path.join(outdir, "runs.csv"))):
        for k in num:
            r[k] = float(r[k]) if r.get(k) not in (None, "") else None
        rows.append(r)
    return rows, meta


def report(outdir, rows, meta):
    global DEFAULT_STEAL
    DEFAULT_STEAL = meta.get("default_steal", "off")
    vlist = [tuple(v) for v in meta["variants"]]
    summary, bad = summarise(rows, vlist)
    for s in summary:  # LB steps per run, for the per-step decision time plot
        vr = [r for r in rows if r["workload"] == s["workload"] and r["variant"] == s["variant"]]
        s["lb_steps"] = med([r["lb_steps"] for r in vr])
    write_csv(os.path.join(outdir, "summary.csv"), summary)
    write_md(os.path.join(outdir, "results.md"), summary, bad, meta)
    plots(summary, outdir, meta["policies"])
    print(open(os.path.join(outdir, "results.md")).read())
    if bad:
        log("bench/run: checksums differ: " + "; ".join(f"{w}: {s}" for w, s in bad))
        sys.exit(1)


if __name__ == "__main__":
    main()
