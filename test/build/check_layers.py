#!/usr/bin/env python3
"""check_layers.py — the library's parts call one way: no circle of calls between its files.

Reads the object files of the library (nm), maps every lbomp symbol a file uses to the file that
defines it, and fails on any cycle of the file graph, printing it. Usage: check_layers.py OBJDIR
"""
import collections
import glob
import os
import subprocess
import sys

objdir = sys.argv[1]
objs = sorted(glob.glob(os.path.join(objdir, "*.o")))
if not objs:
    print(f"no object files in {objdir}")
    sys.exit(1)
defs, uses = {}, collections.defaultdict(set)
for o in objs:
    out = subprocess.run(["nm", o], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 3 and f[1] in "TDBRC" and f[2].startswith("lbomp"):
            defs[f[2]] = o
        elif len(f) == 2 and f[0] == "U" and f[1].startswith("lbomp"):
            uses[o].add(f[1])
def name(o):
    return os.path.basename(o)[: -len(".o")]
graph = {o: sorted({defs[u] for u in uses[o] if u in defs and defs[u] != o}) for o in objs}

# Tarjan's strongly connected components: any component of two files or more is a circle.
index, low, stack, on, cycles, counter = {}, {}, [], set(), [], [0]
def visit(v):
    index[v] = low[v] = counter[0]; counter[0] += 1
    stack.append(v); on.add(v)
    for w in graph[v]:
        if w not in index:
            visit(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop(); on.discard(w); comp.append(w)
            if w == v:
                break
        if len(comp) > 1:
            cycles.append(comp)
sys.setrecursionlimit(10000)
for v in objs:
    if v not in index:
        visit(v)
edges = sum(len(v) for v in graph.values())
if cycles:
    for c in cycles:
        print("circle of calls between: " + ", ".join(name(o) for o in sorted(c)))
    sys.exit(1)
print(f"layers: {len(objs)} files, {edges} calls between files, no circle")
