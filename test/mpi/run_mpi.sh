#!/usr/bin/env bash
# Runs an MPI test: run_mpi.sh NP THREADS PROGRAM ARGS... = mpirun -np NP (oversubscribed: more
# ranks than cores is the point here) with OMP_NUM_THREADS=THREADS for every rank. Exit 77 only
# when MPI is not installed: no mpirun, or the build found no MPI (PROGRAM is then "missing").
set -euo pipefail
np=$1 threads=$2 prog=$3
shift 3
mpirun=$(command -v mpirun || true)
if [ -z "$mpirun" ] || [ "$prog" = missing ]; then
  if [ -z "$mpirun" ]; then
    echo "skipped: MPI is not installed: no mpirun (Debian: apt-get install openmpi-bin" \
         "libopenmpi-dev; scripts/packages.txt lists them)"
  else
    echo "skipped: liblbomp-mpi was not built: meson found no MPI when this build was" \
         "configured (or -Dmpi=disabled); after installing libopenmpi-dev: meson setup --reconfigure"
  fi
  exit 77
fi
# Open MPI refuses root unless told; CI runs as root. --bind-to none unless MPI_BIND says otherwise:
# with more ranks than cores Open MPI would refuse to bind, and each rank's team binds within what
# it gets anyway (the binding case runs with MPI_BIND=core).
# The sanitizers' settings of the ASan build reach every rank.
fwd=()
for v in ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS; do
  [ -n "${!v:-}" ] && fwd+=(-x "$v")
done
# Single-copy transfers between ranks (CMA) need ptrace rights that containers often withhold;
# the copy-in/copy-out path works everywhere.
exec "$mpirun" --allow-run-as-root --oversubscribe --bind-to "${MPI_BIND:-none}" -np "$np" \
  --mca btl_vader_single_copy_mechanism none \
  -x OMP_NUM_THREADS="$threads" -x LBOMP_STEP_TIMEOUT=60 "${fwd[@]}" "$prog" "$@"
