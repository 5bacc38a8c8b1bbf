#!/usr/bin/env python3
"""
bench/abenv.py — one binary, variants that differ only by environment variables, in rotated rounds
(standard library only).

On the development machine one more environment variable that nothing reads moved a run by 2–4 %
(the environment's size shifts the initial stack and what lives on it; bench/README, *auto and
loads that move within a window*). So an A/B of a temporary switch gives every variant the same
variables with values of the same length (`X=0` against `X=1`) and, as a control, a second variant
with the same behaviour and another value (`X=2`, when the switch reads it as `X=1`):

  python3 bench/abenv.py --build build --rounds 16 \\
      --bench "memtask --load moving --size default" p1=XPROBE=1 c1=XPROBE=2 p0=XPROBE=0

A variant is LABEL=VAR=VALUE[,VAR=VALUE…]; BASELINE=omp-x runs that OpenMP baseline instead of
lbomp; BUILD=DIR runs that build's bench instead of --build's (two commits against each other,
each built in its own directory: the same variables otherwise, e.g. `new=BUILD=build,X=1
old=BUILD=/tmp/old/build,X=1`). The variables of the caller's environment are kept, but LBOMP_*
other than LBOMP_POLICY.
Every round runs each variant once, starting one place further each round; `bench/l2share` before
each round sorts it into face "near" or "far" (bench/README, *The two faces*). Prints, per face,
each variant's median total seconds, its ratio to the first variant's median, the median of the
per-round ratios, and the medians of migrations, stolen tasks and steps with stealing armed.
"""
import argparse
import collections
import json
import os
import statistics as st
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from defaults import l2probe  # noqa: E402
from runner import rotated  # noqa: E402


def variant(text):
    label, _, rest = text.partition("=")
    env = {}
    for kv in filter(None, rest.split(",")):
        k, sep, v = kv.partition("=")
        if not sep:
            raise argparse.ArgumentTypeError(f"variant {text!r}: expected LABEL=VAR=VALUE[,VAR=VALUE…]")
        env[k] = v
    return label, env


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--bench", required=True, help='the bench and its options, e.g. "memtask --load moving"')
    ap.add_argument("variants", nargs="+", type=variant)
    a = ap.parse_args()
    args = a.bench.split()
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("LBOMP_") or k == "LBOMP_POLICY"}
    runs = collections.defaultdict(lambda: collections.defaultdict(list))
    ratios = collections.defaultdict(lambda: collections.defaultdict(list))
    for r in range(a.rounds):
        ratio = l2probe(a)
        f = "unknown" if ratio is None else "near" if ratio < 2.0 else "far"
        got = {}
        for label, env in rotated(a.variants, r):
            e = dict(base_env)
            e.update(env)
            extra = ["--baseline", e.pop("BASELINE")] if "BASELINE" in e else []
            build = e.pop("BUILD", a.build)
            cmd = [os.path.join(build, "bench", args[0])] + args[1:] + extra + ["--threads", str(a.threads), "--json"]
            out = subprocess.run(cmd, env=e, capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit(f"abenv: {' '.join(cmd)} failed ({out.returncode}): {out.stderr.strip()[-400:]}")
            j = json.loads(out.stdout.strip().splitlines()[-1])
            t = j.get("total_s") or (j["first_block_s"] + j["last_block_s"])
            got[label] = t
            runs[f][label].append((t, j.get("migrations") or 0, j.get("stolen") or 0, j.get("steal_steps") or 0))
        first = a.variants[0][0]
        for label in got:
            ratios[f][label].append(got[label] / got[first])
    for f in runs:
        first = st.median(x[0] for x in runs[f][a.variants[0][0]])
        for label, _ in a.variants:
            xs = runs[f][label]
            print("%-7s n=%2d %-10s %.4f s  %.3f  paired %.3f  migrations %s stolen %s steal_steps %s" % (
                f, len(xs), label, st.median(x[0] for x in xs), st.median(x[0] for x in xs) / first,
                st.median(ratios[f][label]), st.median(x[1] for x in xs), st.median(x[2] for x in xs),
                st.median(x[3] for x in xs)))


if __name__ == "__main__":
    main()
