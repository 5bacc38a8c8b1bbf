#!/usr/bin/env python3
"""train.py — auto's model (src/policy/auto.h), trained on lbomp-sim.

Runs `lbomp-sim --evolve KIND --auto-data` over a seeded random sample of synthetic workloads
(machine size, tasks per worker, base load, links, NUMA profile, how the costs evolve, task
bytes, noise), and `lbomp-sim --trace FILE --auto-data` over LB steps recorded live with
LBOMP_TRACE (TRACE_RUNS: workloads outside the evaluation set), collects one row per decision (the features the library computes, and the
simulated time of the next window after each candidate's plan, LB step and moves included,
each step run as the runtime's stealing runs it: --steal K, a stolen task at 1 + K times its cost),
keeps the rows where auto's when-rule (run by the simulator as the runtime runs it) armed an
LB step, since only there is the model consulted, labels each row with the fastest candidate (a candidate within --tie of the fastest that comes
first in the list none, greedy, refine, ... wins the tie: the cheaper answer), splits by workload
(held-out workloads never seen in training), and compares kNN (k = 3, standardized features)
with a decision tree (CART, Gini): held-out accuracy, confusion matrix, and regret (time of the
predicted candidate over the fastest's, minus 1). The model with the lower held-out regret is
trained again on every row and written as src/policy/auto-table.txt (the versioned table) and
src/policy/auto_table.c (the same numbers as C arrays, compiled into the library).

  tools/auto/train.py [--sim build/tools/lbomp-sim] [--runs 1000] [--seed 1] [--jobs 2]
                      [--steal 0.25 | --no-steal] [--data FILE.jsonl] [--from FILE.jsonl] [--no-write]

--data keeps the rows; --from trains on rows kept before (no simulation; --steal then only names
what the rows were made with, in the table's header). Under a minute on the 2-core development
machine with the defaults. Standard library only.
"""
import argparse
import json
import math
import os
import random
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CANDS = ["none", "greedy", "refine", "hierarchical", "smart", "greedy-refine", "greedy-comm"]
FEATS = ["avg_load", "above", "lambda", "idle", "task_load", "comm", "remote", "step_var",
         "drift", "numa", "grain", "move"]
VERSION = 1


def workloads(n, seed):
    rng = random.Random(seed)
    profiles = ["xeon-e5-2695v2-2s.xml", "epyc-7742-2s-nps4.xml"]
    out = []
    for i in range(n):
        cores = rng.choice([2, 2, 4, 8, 16, 32, 64, 128])
        tpw = rng.choice([1, 2, 4, 8, 16, 32, 64, 256] if cores <= 4 else [1, 2, 4, 8, 16, 32])
        kind = rng.choice(["static", "drift", "cycle", "walk", "hotspot"])
        a = ["--tasks", str(max(cores * tpw, 8)), "--cores", str(cores),
             "--load", rng.choice(["uniform", "linear", "hotspot", "lbtest", "lbtest-iid"]),
             "--links", rng.choice(["none", "ring:2", "mesh2d", "mesh3d"]),
             "--evolve", kind, "--seed", str(seed * 100000 + i),
             "--amp", str(rng.choice([1.3, 2, 4, 8])),
             "--width", str(rng.choice([0.02, 0.05, 0.1, 0.25])),
             "--noise", str(rng.choice([0, 0.02, 0.05, 0.15])),
             "--task-bytes", str(rng.choice([0, 4096, 65536, 1 << 20])),
             "--link-bytes", str(rng.choice([0, 1024, 65536])),
             "--byte-ns", str(rng.choice([0.1, 1.0])),
             "--time-steps", "100", "--period", "10"]
        if kind == "drift":
            a += ["--drift-speed", str(rng.choice([0.002, 0.01, 0.03, 0.1]))]
        elif kind == "walk":
            a += ["--drift-speed", str(rng.choice([0.01, 0.05, 0.15, 0.4]))]
        elif kind == "cycle":
            a += ["--cycle", str(rng.choice([3, 7, 15, 40]))]
        elif kind == "hotspot":
            a += ["--hot-at", str(rng.choice([0, 15, 35, 55]))]
        if rng.random() < 0.3:
            a += ["--profile", os.path.join(ROOT, "numa-profiles", rng.choice(profiles))]
        out.append(a)
    return out


# Live runs recorded with LBOMP_TRACE for training (bench binary, arguments, policy). None of them
# is a workload of the evaluation (bench/run's and evaluate.py's): kneighbor's linear load is not
# in bench/run, and memtask's drift is not in its --quick set.
TRACE_RUNS = [
    ("kneighbor", "--load linear --tasks 512 --iters 60 --period 10 --work-us 20", "greedy"),
    ("kneighbor", "--load linear --k 4 --tasks 1024 --iters 60 --period 10 --work-us 10", "refine"),
    ("memtask", "--load drift --size small --iters 300", "refine"),
]


def traces(sim, tmp):
    """Records TRACE_RUNS live (2 threads) and turns every LB step into a row (lbomp-sim --trace
    FILE --auto-data: the recorded costs taken to persist over the next window)."""
    bench = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(sim))), "bench")
    env0 = {k: v for k, v in os.environ.items() if not k.startswith("LBOMP_")}
    rows = []
    for i, (binary, args, pol) in enumerate(TRACE_RUNS):
        trc = os.path.join(tmp, f"trace{i}.trc")
        env = dict(env0, LBOMP_TRACE=trc, LBOMP_POLICY=pol, OMP_NUM_THREADS="2")
        r = subprocess.run([os.path.join(bench, binary)] + args.split() + ["--threads", "2"],
                           env=env, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"train: {binary} {args} failed: {r.stderr.strip()[-300:]}")
        r = subprocess.run([sim, "--trace", trc, "--auto-data", "--period", "10"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"train: lbomp-sim --trace {trc} --auto-data failed: {r.stderr.strip()}")
        part = [dict(json.loads(l), run=-1 - i) for l in r.stdout.splitlines() if l.strip()]
        print(f"trace {i}: {binary} {args} under {pol}: {len(part)} LB steps", file=sys.stderr)
        rows += part
    return rows


def simulate(sim, runs, jobs, steal=None):
    def one(item):
        i, args = item
        more = [] if steal is None else ["--steal", str(steal)]
        r = subprocess.run([sim] + args + more + ["--auto-data"], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"train: lbomp-sim {' '.join(args)} failed: {r.stderr.strip()}")
        return [dict(json.loads(l), run=i) for l in r.stdout.splitlines() if l.strip()]
    rows = []
    with ThreadPoolExecutor(jobs) as ex:
        for part in ex.map(one, enumerate(runs)):
            rows += part
    return rows


def label(t, tie):
    best = min(t)
    for c, v in enumerate(t):
        if v <= best * (1 + tie):
            return c
    return t.index(best)


def standardize(X):
    n, d = len(X), len(X[0])
    mean = [sum(x[j] for x in X) / n for j in range(d)]
    scale = []
    for j in range(d):
        v = sum((x[j] - mean[j]) ** 2 for x in X) / n
        scale.append(math.sqrt(v) if v > 1e-12 else 1.0)
    return mean, scale


def apply_std(X, mean, scale):
    return [[(x[j] - mean[j]) / scale[j] for j in range(len(x))] for x in X]


def knn_predict(Xtr, ytr, x, k=3):
    # the library's rule: the k nearest, a vote, a tie to the nearest row's label among the tied
    d = sorted((sum((a - b) ** 2 for a, b in zip(r, x)), i) for i, r in enumerate(Xtr))[:k]
    votes = {}
    for _, i in d:
        votes[ytr[i]] = votes.get(ytr[i], 0) + 1
    best = ytr[d[0][1]]
    for _, i in d:
        if votes[ytr[i]] > votes[best]:
            best = ytr[i]
    return best


def gini(counts, n):
    return 1.0 - sum((c / n) ** 2 for c in counts.values()) if n else 0.0


def tree_fit(X, y, depth=7, min_leaf=4):
    nodes = []

    def majority(idx):
        c = {}
        for i in idx:
            c[y[i]] = c.get(y[i], 0) + 1
        return max(sorted(c), key=lambda k: c[k])

    def build(idx, d):
        me = len(nodes)
        nodes.append(None)
        lab = majority(idx)
        if d == 0 or len(idx) < 2 * min_leaf or len(set(y[i] for i in idx)) == 1:
            nodes[me] = (-1, lab, 0.0, 0, 0)
            return me
        best = None
        n = len(idx)
        for f in range(len(X[0])):
            order = sorted(idx, key=lambda i: X[i][f])
            left, right = {}, {}
            for i in order:
                right[y[i]] = right.get(y[i], 0) + 1
            for k in range(n - 1):
                yi = y[order[k]]
                left[yi] = left.get(yi, 0) + 1
                right[yi] -= 1
                if k + 1 < min_leaf or n - k - 1 < min_leaf:
                    continue
                a, b = X[order[k]][f], X[order[k + 1]][f]
                if a == b:
                    continue
                g = ((k + 1) * gini(left, k + 1) + (n - k - 1) * gini(right, n - k - 1)) / n
                if best is None or g < best[0] - 1e-12:
                    best = (g, f, (a + b) / 2)
        if best is None or best[0] >= gini({c: sum(1 for i in idx if y[i] == c) for c in set(y[i] for i in idx)}, n) - 1e-9:
            nodes[me] = (-1, lab, 0.0, 0, 0)
            return me
        _, f, thr = best
        li = [i for i in idx if X[i][f] <= thr]
        ri = [i for i in idx if X[i][f] > thr]
        l = build(li, d - 1)
        r = build(ri, d - 1)
        nodes[me] = (f, lab, thr, l, r)
        return me

    build(list(range(len(X))), depth)
    return nodes


def tree_predict(nodes, x):
    i = 0
    while nodes[i][0] >= 0:
        f, _, thr, l, r = nodes[i]
        i = l if x[f] <= thr else r
    return nodes[i][1]


def evaluate(name, pred, rows, matrix=True):
    n = len(rows)
    conf = [[0] * len(CANDS) for _ in CANDS]
    acc = 0
    regret = 0.0
    near = 0
    for p, r in zip(pred, rows):
        conf[r["y"]][p] += 1
        acc += p == r["y"]
        best = min(r["t"])
        regret += r["t"][p] / best - 1
        near += r["t"][p] <= best * 1.01
    print(f"{name}: held-out accuracy {acc / n:.3f} ({acc}/{n}), mean regret {regret / n * 100:.2f} %"
          f" over the fastest, within 1 % of the fastest {near / n:.3f}")
    if not matrix:
        return regret / n, acc / n
    w = max(len(c) for c in CANDS)
    print("  confusion (rows: label, columns: predicted)")
    short = {"hierarchical": "hier", "greedy-refine": "g-ref", "greedy-comm": "g-comm"}
    print("  " + " " * w + " " + " ".join(f"{short.get(c, c)[:6]:>6}" for c in CANDS))
    for i, c in enumerate(CANDS):
        print(f"  {c:>{w}} " + " ".join(f"{v:6d}" for v in conf[i]))
    return regret / n, acc / n


def cf(v, digits=7):
    """A C float literal."""
    t = f"{v:.{digits}g}"
    if not any(c in t for c in ".en"):
        t += ".0"
    return t + "f"


def write_table(model, mean, scale, X, y, nodes, meta):
    txt = os.path.join(ROOT, "src", "policy", "auto-table.txt")
    csrc = os.path.join(ROOT, "src", "policy", "auto_table.c")
    with open(txt, "w") as f:
        f.write(f"# lbomp auto model, written by tools/auto/train.py: do not edit\n")
        for k, v in meta.items():
            f.write(f"# {k}: {v}\n")
        f.write(f"version {VERSION}\nmodel {model}\nk 3\n")
        f.write("features " + " ".join(FEATS) + "\n")
        f.write("classes " + " ".join(CANDS) + "\n")
        f.write("mean " + " ".join(f"{v:.7g}" for v in mean) + "\n")
        f.write("scale " + " ".join(f"{v:.7g}" for v in scale) + "\n")
        if model == "knn":
            for x, c in zip(X, y):
                f.write(f"row {c} " + " ".join(f"{v:.6g}" for v in x) + "\n")
        else:
            for nd in nodes:
                f.write("node {} {} {:.7g} {} {}\n".format(*nd))
    with open(csrc, "w") as f:
        f.write("/* Generated by tools/auto/train.py from its training runs (auto-table.txt holds the "
                "same\n * numbers as text): do not edit. */\n#include \"auto.h\"\n\n")
        f.write("static const float mean[LBOMP__AUTO_NFEAT] = {" + ", ".join(cf(v) for v in mean) + "};\n")
        f.write("static const float scale[LBOMP__AUTO_NFEAT] = {" + ", ".join(cf(v) for v in scale) + "};\n")
        if model == "knn":
            f.write("static const float rows[] = {\n")
            for x in X:
                f.write("        " + ", ".join(cf(v, 6) for v in x) + ",\n")
            f.write("};\nstatic const uint8_t label[] = {\n")
            for i in range(0, len(y), 32):
                f.write("        " + ", ".join(str(c) for c in y[i:i + 32]) + ",\n")
            f.write("};\n")
            f.write("const struct lbomp__auto_model lbomp__auto_table = {\n"
                    "        .version = %d, .kind = 0, .k = 3, .nrows = %d, .mean = mean, .scale = scale,\n"
                    "        .rows = rows, .label = label};\n" % (VERSION, len(y)))
        else:
            f.write("static const struct lbomp__auto_node node[] = {\n")
            for fe, lab, thr, l, r in nodes:
                f.write(f"        {{{fe}, {lab}, {cf(thr)}, {l}, {r}}},\n")
            f.write("};\n")
            f.write("const struct lbomp__auto_model lbomp__auto_table = {\n"
                    "        .version = %d, .kind = 1, .k = 3, .mean = mean, .scale = scale,\n"
                    "        .nnodes = %d, .node = node};\n" % (VERSION, len(nodes)))
    try:  # the repository's format, as every C file
        subprocess.run(["clang-format", "-i", csrc], check=False)
    except FileNotFoundError:
        pass
    print(f"wrote {txt} and {csrc}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sim", default=os.path.join(ROOT, "build", "tools", "lbomp-sim"))
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--tie", type=float, default=0.005)
    ap.add_argument("--holdout", type=float, default=0.25)
    ap.add_argument("--knn-rows", type=int, default=1000,
                    help="rows the kNN table keeps (a seeded sample), for a decision in microseconds")
    ap.add_argument("--all-rows", action="store_true",
                    help="train on every period's row, not only those the when-rule armed")
    ap.add_argument("--no-traces", action="store_true",
                    help="synthetic workloads only (no live run recorded with LBOMP_TRACE)")
    ap.add_argument("--steal", type=float, default=0.25,
                    help="label the synthetic rows with the runtime's stealing modelled (lbomp-sim "
                         "--steal K: a stolen task costs 1 + K times its cost; default 0.25)")
    ap.add_argument("--no-steal", dest="steal", action="store_const", const=None,
                    help="steps as long as their most loaded worker (the tables before 2026-11-28 23:00)")
    ap.add_argument("--data")
    ap.add_argument("--from", dest="src")
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args()
    if a.src:
        rows = [json.loads(l) for l in open(a.src)]
    else:
        runs = workloads(a.runs, a.seed)
        rows = simulate(a.sim, runs, a.jobs, a.steal)
        if not a.no_traces:
            import tempfile
            with tempfile.TemporaryDirectory(prefix="lbomp-auto-") as tmp:
                rows += traces(a.sim, tmp)
        if a.data:
            with open(a.data, "w") as f:
                for r in rows:
                    f.write(json.dumps(r) + "\n")
    nall = len(rows)
    if not a.all_rows:  # the runtime consults the model only when the when-rule armed an LB step
        rows = [r for r in rows if r.get("armed", True)]
    how = "no stealing" if a.steal is None else f"stealing modelled, lbomp-sim --steal {a.steal:g}"
    print(f"{len(rows)} of {nall} rows are decisions the when-rule armed ({how})")
    for r in rows:
        r["y"] = label(r["t"], a.tie)
    # runs are numbered 0.. (synthetic) and -1, -2, .. (traces): each is held out whole or not
    ids = sorted({r["run"] for r in rows})
    nrun = len(ids)
    rows = [dict(r) for r in rows]
    rng = random.Random(a.seed)
    held = set(rng.sample(ids, max(1, int(nrun * a.holdout))))
    tr = [r for r in rows if r["run"] not in held]
    te = [r for r in rows if r["run"] in held]
    counts = [sum(1 for r in rows if r["y"] == c) for c in range(len(CANDS))]
    ntr = sum(1 for r in rows if r["run"] < 0)
    print(f"{len(rows)} rows ({ntr} from traces) from {nrun} workloads with at least one; "
          f"{len(tr)} for training, {len(te)} held out "
          f"({len(held)} workloads); labels: " + ", ".join(f"{c} {n}" for c, n in zip(CANDS, counts)))
    mean, scale = standardize([r["f"] for r in tr])
    Xtr = apply_std([r["f"] for r in tr], mean, scale)
    Xte = apply_std([r["f"] for r in te], mean, scale)
    ytr = [r["y"] for r in tr]
    keep = sorted(random.Random(a.seed + 1).sample(range(len(Xtr)), min(a.knn_rows, len(Xtr))))
    Ktr, kytr = [Xtr[i] for i in keep], [ytr[i] for i in keep]
    knn_reg, knn_acc = evaluate(f"kNN k=3 ({len(Ktr)} rows)", [knn_predict(Ktr, kytr, x) for x in Xte], te)
    nodes = tree_fit(Xtr, ytr)
    tree_reg, tree_acc = evaluate(f"tree ({len(nodes)} nodes)", [tree_predict(nodes, x) for x in Xte], te)
    for c in range(len(CANDS)):
        evaluate(f"always {CANDS[c]}", [c] * len(te), te, matrix=False)

    model = "knn" if knn_reg <= tree_reg else "tree"
    print(f"kept: {model} (lower held-out regret)")
    if a.no_write:
        return
    mean, scale = standardize([r["f"] for r in rows])
    X = apply_std([r["f"] for r in rows], mean, scale)
    y = [r["y"] for r in rows]
    nodes = tree_fit(X, y) if model == "tree" else None
    if model == "knn":
        keep = sorted(random.Random(a.seed + 1).sample(range(len(X)), min(a.knn_rows, len(X))))
        X, y = [X[i] for i in keep], [y[i] for i in keep]
    meta = {"workloads": nrun, "rows": len(rows), "seed": a.seed, "tie": a.tie,
            "stealing modelled": "no" if a.steal is None else f"lbomp-sim --steal {a.steal:g}",
            "held-out accuracy knn": f"{knn_acc:.3f}", "held-out regret knn": f"{knn_reg * 100:.2f} %",
            "held-out accuracy tree": f"{tree_acc:.3f}", "held-out regret tree": f"{tree_reg * 100:.2f} %"}
    write_table(model, mean, scale, X, y, nodes, meta)


if __name__ == "__main__":
    main()
