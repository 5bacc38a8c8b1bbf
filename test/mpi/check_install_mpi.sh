#!/usr/bin/env bash
# After `meson install`, an MPI user compiles with
#   mpicc -fopenmp app.c $(pkg-config --cflags --libs lbomp-mpi)
# install into a scratch DESTDIR, build the README's MPI example against it, run it on 2 ranks.
# Usage: check_install_mpi.sh BUILD SRC RUN_MPI
set -euo pipefail
build=$1 src=$2 run=$3
command -v mpicc >/dev/null || { echo "skipped: no mpicc (Debian: libopenmpi-dev)"; exit 77; }
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
meson install -C "$build" --destdir "$dest" --no-rebuild >/dev/null
prefix=$(meson introspect "$build" --buildoptions | python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"][0])')
pc=$(dirname "$(find "$dest" -name lbomp-mpi.pc | head -n 1)")
[ -n "$pc" ] || { echo "FAIL: lbomp-mpi.pc not installed"; exit 1; }
[ -f "$dest$prefix/include/lbomp_mpi.h" ] || { echo "FAIL: lbomp_mpi.h not installed"; exit 1; }
export PKG_CONFIG_PATH=$pc
flags=$(pkg-config --define-variable=prefix="$dest$prefix" --cflags --libs lbomp-mpi)
echo "pkg-config lbomp-mpi: $flags"
mpicc -fopenmp "$src/test/mpi/example_mpi.c" $flags -o "$dest/app"
libdir=$(pkg-config --define-variable=prefix="$dest$prefix" --variable=libdir lbomp-mpi)
LD_LIBRARY_PATH=$libdir "$run" 2 1 "$dest/app" >"$dest/out"
grep -q "lbomp-mpi: 2 ranks" "$dest/out" || { echo "FAIL: the example did not report"; cat "$dest/out"; exit 1; }
# liblbomp itself stays free of MPI.
if ldd "$libdir/liblbomp.so" | grep -q libmpi; then echo "FAIL: liblbomp.so links MPI"; exit 1; fi
echo ok
