#!/usr/bin/env python3
"""compare.py — the drop-in against OpenMP's own schedules on one unchanged binary.

Builds bench/preload/rtloop.c with `gcc -fopenmp -O2` (and `clang -fopenmp -O2`, LLVM's libomp,
where installed), then runs each workload (skew: a persistently skewed loop; mem: iterations that
own memory) under OMP_SCHEDULE=static, dynamic,1, guided and, with LD_PRELOAD of
liblbomp-preload.so, lbomp (the default configuration: no LBOMP_* variable), interleaved (the
order rotates every repeat), and prints per workload the median loop time of each variant, its
ratio to the best OpenMP schedule's median, and for lbomp what its report says (λ of the first
and last window, migrations, chunks, and the chunks run by a thief over the run, median). Every
run's checksum must be the same.

  python3 bench/preload/compare.py --build build --repeats 7 [--bind] [--compilers gcc,clang]
      [--kinds skew,mem] [--steps S] [--variants "static dynamic,1 guided lbomp dynamic,1+"]

A variant lbomp@LBOMP_PERIOD=10 is the preload with that variable set (several: joined by @), to
compare the default with another configuration in the same interleaved runs.

--bind adds each variant again under OMP_PROC_BIND=close (the runtime binds its threads; lbomp
then leaves binding to it), to tell what binding alone is worth.

Two references say what the numbers can mean (--no-reference leaves them out). The row "one
thread ÷ N" is the same binary under OMP_SCHEDULE=static with one thread, its time divided by the
team's N threads, interleaved with the rest: no schedule does much better on a loop whose time is
its cores' arithmetic (a faster one needs the data to live closer to the cores than one thread's
run finds it). The face probe (bench/README.md, "two faces") is `memtask`'s omp-dynamic ÷
omp-static median step on the balanced 1 MiB loop, before and after each table: about 1.2 when a
task that changes core finds its data near, 2.5 and more when far.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def build(cc, out, opt):
    subprocess.run([cc, "-fopenmp", opt, "-o", out, os.path.join(HERE, "rtloop.c"), "-lm"],
                   check=True)


def probe(build_dir, threads):
    """The machine's face now: omp-dynamic ÷ omp-static median step of the balanced 1 MiB memtask
    (as bench/runner.py measures it), or None."""
    exe = os.path.join(build_dir, "bench", "memtask")
    if not os.path.exists(exe):
        return None
    med = {}
    # Twice each, alternated, the lower median kept: the first run after a quiet spell is slow.
    for b in ("omp-static", "omp-dynamic") * 2:
        env = {k: v for k, v in os.environ.items() if not k.startswith("LBOMP_")}
        p = subprocess.run([exe, "--load", "balanced", "--size", "small", "--iters", "2000",
                            "--threads", str(threads), "--json", "--baseline", b],
                           env=env, capture_output=True, text=True)
        if p.returncode != 0:
            return None
        m = json.loads(p.stdout.strip().splitlines()[-1])["step_s_median"]
        med[b] = min(med.get(b, m), m)
    return med["omp-dynamic"] / med["omp-static"]


def fmt_probe(x):
    return "–" if x is None else f"{x:.2f}"


ONE = "one thread"  # the reference variant: OMP_SCHEDULE=static, OMP_NUM_THREADS=1


def run(binary, kind, variant, bind, preload, steps, threads, tmp, with_preload=False):
    if variant == ONE:
        variant, threads = "static", 1
    variant, *sets = variant.split("@")  # lbomp@LBOMP_PERIOD=10: the preload with that variable
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    for k in list(env):
        if k.startswith("LBOMP_") or k in ("OMP_PROC_BIND", "OMP_PLACES", "LD_PRELOAD"):
            del env[k]
    env.update(s.split("=", 1) for s in sets)
    env["OMP_SCHEDULE"] = variant
    if bind:
        env["OMP_PROC_BIND"] = "close"
    report = os.path.join(tmp, "report.txt")
    if variant.startswith("lbomp") or with_preload:
        env["LD_PRELOAD"] = preload
    if variant.startswith("lbomp"):
        env["LBOMP_PRELOAD_REPORT"] = report
        if os.path.exists(report):
            os.remove(report)
    args = [binary, "--kind", kind]
    if steps:
        args += ["--steps", str(steps)]
    p = subprocess.run(args, env=env, capture_output=True, text=True)
    if p.returncode != 0 or p.stderr.strip():
        sys.exit(f"{' '.join(args)} under {variant}: exit {p.returncode}\n{p.stderr}")
    m = re.search(r"time_s (\S+) checksum (\S+)", p.stdout)
    r = {"t": float(m.group(1)), "sum": m.group(2)}
    if variant.startswith("lbomp"):
        with open(report) as f:
            for line in f:
                f_ = line.split()
                if len(f_) >= 10 and f_[-7].isdigit() and "step" in line:
                    r["chunks"], r["lb"] = int(f_[-6]), int(f_[-5])
                    r["l0"], r["l1"], r["mig"] = f_[-4], f_[-3], int(f_[-2])
                    r["stolen"] = int(f_[-1])
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--kinds", default="skew,mem")
    ap.add_argument("--compilers", default="gcc,clang")
    ap.add_argument("--bind", action="store_true")
    ap.add_argument("--opt", default="-O2", help="optimisation flag of both builds")
    ap.add_argument("--steps", type=int, default=0, help="steps per run (0: rtloop's default)")
    ap.add_argument("--variants", default="static dynamic,1 guided lbomp dynamic,1+",
                    help="OMP_SCHEDULE values, space-separated; a trailing + loads the preload "
                         "under another schedule; lbomp@VAR=V[@VAR=V] is lbomp with LBOMP_* "
                         "variables set (every other variant runs without any)")
    ap.add_argument("--no-reference", action="store_true",
                    help="leave out the one-thread row and the face probe")
    a = ap.parse_args()
    preload = os.path.abspath(os.path.join(a.build, "src", "preload", "liblbomp-preload.so"))
    if not os.path.exists(preload):
        sys.exit(f"{preload}: not built (bash scripts/build.sh {a.build})")
    tmp = tempfile.mkdtemp()
    # (OMP_SCHEDULE, OMP_PROC_BIND=close?); "dynamic,1+" is dynamic,1 with the preload loaded,
    # which must change nothing.
    variants = [(v, False) for v in a.variants.split()]
    if a.bind:
        variants += [(v, True) for v in a.variants.split() if not v.endswith("+")]
    if not a.no_reference:
        variants.append((ONE, False))
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {a.opt}, {a.threads} threads, "
          f"{a.repeats} repeats, load average {loadavg()}")
    ok = True
    for cc in a.compilers.split(","):
        if not shutil.which(cc):
            print(f"\n{cc}: not installed, skipped")
            continue
        binary = os.path.join(tmp, "rtloop-" + cc)
        try:
            build(cc, binary, a.opt)
        except subprocess.CalledProcessError:
            print(f"\n{cc}: cannot build an OpenMP program here, skipped")
            continue
        for kind in a.kinds.split(","):
            face0 = None if a.no_reference else probe(a.build, a.threads)
            res = {v: [] for v in variants}
            for rep in range(a.repeats):
                k = rep % len(variants)
                for v in variants[k:] + variants[:k]:
                    res[v].append(run(binary, kind, v[0].rstrip("+"), v[1], preload, a.steps,
                                      a.threads, tmp, with_preload=v[0].endswith("+")))
            sums = {r["sum"] for v in variants for r in res[v]}
            ok &= len(sums) == 1
            # The one-thread reference as a time per thread of the team.
            for r in res.get((ONE, False), []):
                r["t"] /= a.threads
            med = {v: statistics.median(r["t"] for r in res[v]) for v in variants}
            face = "" if a.no_reference else (
                f"; face probe {fmt_probe(face0)} → {fmt_probe(probe(a.build, a.threads))}")
            print(f"\n{cc}, {kind} (load average {loadavg()}; checksums "
                  f"{'all equal' if len(sums) == 1 else 'DIFFER'}{face})\n")
            print("| variant | median s | min–max s | ratio to best OpenMP | λ first → last window"
                  " | migrations | chunks | stolen chunks |")
            print("|---|---|---|---|---|---|---|---|")
            for bind in sorted({b for _, b in variants}):
                base = [med[v] for v in variants
                        if v[1] == bind and v[0] in ("static", "dynamic,1", "guided")]
                best = min(base) if base else min(med[v] for v in variants if v[1] == bind)
                for v in [v for v in variants if v[1] == bind]:
                    ts = [r["t"] for r in res[v]]
                    name = ("OMP_SCHEDULE=" + v[0].rstrip("+")) + (
                        " OMP_PROC_BIND=close" if bind else "")
                    if v[0] == ONE:
                        name = f"reference: one thread ÷ {a.threads} (OMP_SCHEDULE=static)"
                    if v[0].endswith("+"):
                        name = "preload loaded, " + name
                    if v[0].startswith("lbomp"):
                        name = "preload + " + name.replace("@", " ")
                        last = res[v][-1]
                        extra = (f"{last.get('l0', '-')} → {last.get('l1', '-')} | "
                                 f"{statistics.median(r.get('mig', 0) for r in res[v]):.0f} | "
                                 f"{last.get('chunks', '-')} | "
                                 f"{statistics.median(r.get('stolen', 0) for r in res[v]):.0f}")
                    else:
                        extra = "– | – | – | –"
                    ratio = med[v] / best
                    bold = "**" if v[0].startswith("lbomp") else ""
                    print(f"| {name} | {med[v]:.3f} | {min(ts):.3f}–{max(ts):.3f} | "
                          f"{bold}{ratio:.3f}{bold} | {extra} |")
    shutil.rmtree(tmp)
    if not ok:
        sys.exit("checksums differ between variants")


if __name__ == "__main__":
    main()
