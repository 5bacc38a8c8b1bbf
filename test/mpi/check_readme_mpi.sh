#!/usr/bin/env bash
# The README's MPI example is test/mpi/example_mpi.c, character for character (the suite mpi runs
# it), and its two MPI commands are the ones this repository provides.
set -euo pipefail
root=$1
extracted=$(awk '/^<!-- mpi-example -->$/{m=1;next} m && /^```c$/{f=1;next} f && /^```$/{exit} f' "$root/README.md")
if ! diff <(printf '%s\n' "$extracted") "$root/test/mpi/example_mpi.c"; then
  echo "FAIL: README.md's MPI example differs from test/mpi/example_mpi.c"; exit 1
fi
cmds=$(awk '/^<!-- mpi-commands -->$/{m=1;next} m && /^```sh$/{f=1;next} f && /^```$/{exit} f' "$root/README.md")
[ "$(wc -l <<<"$cmds")" -eq 2 ] || { echo "FAIL: the MPI commands are not two lines: $cmds"; exit 1; }
grep -q '^bash scripts/deps.sh && bash scripts/build.sh build$' <<<"$cmds" ||
  { echo "FAIL: the first MPI command does not build"; exit 1; }
grep -q '^mpirun .* build/bench/kneighbor-mpi ' <<<"$cmds" ||
  { echo "FAIL: the second MPI command does not run kneighbor-mpi"; exit 1; }
grep -qx 'openmpi-bin' "$root/scripts/packages.txt" && grep -qx 'libopenmpi-dev' "$root/scripts/packages.txt" ||
  { echo "FAIL: scripts/packages.txt does not install Open MPI"; exit 1; }
echo ok
