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
# The drop-in is installed beside liblbomp, and works from there on an unchanged program.
[ -f "$libdir/liblbomp-preload.so" ] || { echo "FAIL: liblbomp-preload.so not beside liblbomp in $libdir"; exit 1; }
printf '#include <stdio.h>\nint main(void){long s=0;\n#pragma omp parallel for schedule(runtime) reduction(+:s)\nfor(int i=0;i<1000;i++)s+=i;\nprintf("%%ld\\n",s);return 0;}\n' >"$dest/rt.c"
cc -fopenmp "$dest/rt.c" -o "$dest/rt"
[ "$(OMP_NUM_THREADS=2 OMP_SCHEDULE=lbomp LD_PRELOAD="$libdir/liblbomp-preload.so" LBOMP_PRELOAD_REPORT="$dest/rep" "$dest/rt")" = 499500 ] ||
  { echo "FAIL: the installed preload"; exit 1; }
grep -q "1 loop(s) balanced by lbomp" "$dest/rep" || { echo "FAIL: the installed preload took no loop"; cat "$dest/rep"; exit 1; }
echo "installed liblbomp-preload.so: ok"
echo ok
