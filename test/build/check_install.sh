#!/usr/bin/env bash
# After `meson install`, a user compiles with `cc -fopenmp app.c $(pkg-config --cflags --libs lbomp)`:
# install into a scratch DESTDIR, build the README example against it (shared and static), run it.
set -euo pipefail
build=$1 src=$2
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
meson install -C "$build" --destdir "$dest" --no-rebuild >/dev/null
prefix=$(meson introspect "$build" --buildoptions | python3 -c 'import json,sys; print([o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"][0])')
pc=$(dirname "$(find "$dest" -name lbomp.pc | head -n 1)")
[ -n "$pc" ] || { echo "FAIL: lbomp.pc not installed"; exit 1; }
[ -f "$dest$prefix/include/lbomp.h" ] || { echo "FAIL: lbomp.h not installed"; exit 1; }
export PKG_CONFIG_PATH=$pc
flags=$(pkg-config --define-variable=prefix="$dest$prefix" --cflags --libs lbomp)
echo "pkg-config: $flags"
cc -fopenmp "$src/test/e2e/example.c" $flags -o "$dest/app"
LD_LIBRARY_PATH=$(pkg-config --define-variable=prefix="$dest$prefix" --variable=libdir lbomp) \
  OMP_NUM_THREADS=2 "$dest/app" >"$dest/out"
grep -q "lbomp report" "$dest/out" || { echo "FAIL: the example did not report"; cat "$dest/out"; exit 1; }
libdir=$(pkg-config --define-variable=prefix="$dest$prefix" --variable=libdir lbomp)
cc -fopenmp "$src/test/e2e/example.c" -I"$dest$prefix/include" "$libdir/liblbomp.a" \
  -lhwloc -lnuma -lm -o "$dest/app-static"
OMP_NUM_THREADS=2 "$dest/app-static" | grep -q "lbomp report" || { echo "FAIL: static example"; exit 1; }
echo "static liblbomp.a: ok"
echo ok
