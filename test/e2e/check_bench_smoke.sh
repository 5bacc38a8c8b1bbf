#!/usr/bin/env bash
# bench_smoke: every workload of bench/ runs with --size tiny under every policy the library lists
# (LBOMP_POLICY=help), with stealing, and under each OpenMP baseline, and every variant of a
# workload ends with the same checksum; the JSON keys of the contract are present, with policy
# null and baseline set for the baselines, and every task ran exactly once in every step.
# Usage: check_bench_smoke.sh BENCH_BUILD_DIR
set -euo pipefail
dir=$1
exec python3 - "$dir" <<'PY'
import json, os, subprocess, sys, time
d = sys.argv[1]
policies = [l.split()[0] for l in subprocess.run([f"{d}/kneighbor"], env={**os.environ, "LBOMP_POLICY": "help"},
            capture_output=True, text=True, check=True).stdout.splitlines() if l.strip()]
assert {"none", "greedy", "refine"} <= set(policies), policies
workloads = [("kneighbor", ["--load", l]) for l in ("hotspot", "lbtest", "drift", "linear")]
workloads += [("lbtest", ["--topology", t]) for t in ("ring", "mesh2d", "mesh3d", "random")]
workloads += [("stencil3d", []), ("leanmd", [])]
# memtask: tasks own memory, first touched in step 0 by whichever thread runs them there
workloads += [("memtask", ["--load", l]) for l in ("balanced", "cluster", "hotspot", "drift", "moving")]
workloads += [("memtask", ["--load", "hotspot", "--heavy", "passes"])]
workloads += [("memtask", ["--kernel", "stencil", "--load", l]) for l in ("cluster", "hotspot", "moving")]
variants = [(["--policy", p], {}) for p in policies] + [(["--policy", "none"], {"LBOMP_STEAL": "all"}),
            (["--policy", "greedy"], {"LBOMP_STEAL": "node"}), (["--policy", "refine"], {"LBOMP_STEAL": "off"})]
variants += [(["--policy", "greedy", "--threads", "1"], {}), (["--policy", "refine", "--threads", "3"], {}),
             (["--baseline", "omp-dynamic", "--threads", "3"], {})]
variants += [(["--baseline", b], {}) for b in ("omp-static", "omp-dynamic", "omp-guided", "omp-tasks")]
keys = ("bench policy baseline threads tasks k iters period load total_s step_s_median lb_steps "
        "imbalance_first imbalance_last migrations decision_s messages topology nodes cores "
        "locality_cost_first locality_cost_last move_cost stolen steal_steps exactly_once checksum").split()
failed, runs, t0 = [], 0, time.time()
for prog, args in workloads:
    sums = {}
    for vargs, env in variants:
        cmd = [f"{d}/{prog}", "--size", "tiny", "--threads", "2", "--period", "4", "--json"] + args + vargs
        p = subprocess.run(cmd, env={**os.environ, **env}, capture_output=True, text=True)
        runs += 1
        label = " ".join(f"{k}={v}" for k, v in env.items()) + " " + " ".join(cmd[1:])
        if p.returncode != 0:
            failed.append(f"{label}: exit {p.returncode}: {p.stderr.strip()}")
            continue
        r = json.loads(p.stdout.strip().splitlines()[-1])
        missing = [k for k in keys if k not in r]
        if missing:
            failed.append(f"{label}: JSON keys missing: {missing}")
        if vargs[0] == "--baseline" and (r["policy"] is not None or r["baseline"] != vargs[1]):
            failed.append(f"{label}: policy {r['policy']!r}, baseline {r['baseline']!r}")
        if vargs[0] == "--policy" and (r["policy"] != vargs[1] or r["baseline"] is not None):
            failed.append(f"{label}: policy {r['policy']!r}, baseline {r['baseline']!r}")
        if r.get("exactly_once") is not True:
            failed.append(f"{label}: exactly_once {r.get('exactly_once')!r}")
        threads = int([cmd[i + 1] for i, a in enumerate(cmd) if a == "--threads"][-1])
        if r["threads"] != threads:
            failed.append(f"{label}: threads {r['threads']} != {threads}")
        if r["bench"] != prog:
            failed.append(f"{label}: bench {r['bench']!r}")
        sums.setdefault(r["checksum"], []).append(" ".join(vargs) + (" " + str(env) if env else ""))
    print(f"{prog} {' '.join(args)}: {len(sums)} distinct checksum(s): "
          + "; ".join(f"{c!r} ← {len(v)} variants" for c, v in sums.items()))
    if len(sums) != 1:
        failed.append(f"{prog} {' '.join(args)}: checksums differ: {sums}")
print(f"{runs} runs in {time.time() - t0:.1f} s; policies: {', '.join(policies)}")
if failed:
    print("FAIL:\n  " + "\n  ".join(failed))
    sys.exit(1)
print("ok")
PY
