#!/usr/bin/env bash
# check_preload.sh PRELOAD_SO PROG_C — (direct.c beside PROG_C) the drop-in on unchanged binaries: prog.c built with
# `gcc -fopenmp -O2` (and with clang + LLVM's libomp where they can build it), each run without
# the preload and with LD_PRELOAD=liblbomp-preload.so under OMP_SCHEDULE=lbomp, lbomp,greedy and
# dynamic,1, with 1 to 3 threads. Every run must print the same checksums as the plain run (prog
# itself fails if any iteration of any run did not run exactly once); under lbomp the report must
# list the loops lbomp took, and stderr must hold exactly one line per loop it left to the
# runtime (ordered, doacross, task reduction, nested team, a ninth range, another team size) and
# no warning from the runtime about OMP_SCHEDULE; under dynamic,1 nothing may change at all.
set -euo pipefail
pl=$(readlink -f "$1")
src=$(readlink -f "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# An instrumented preload (the ASan build) needs the sanitizer runtimes loaded before it.
preload=$pl
if readelf -d "$pl" | grep -q 'libasan'; then
  preload="$(gcc -print-file-name=libasan.so) $pl"
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
fi

# It exports only what it interposes, and links no OpenMP runtime (it uses the program's).
extra=$(nm -D --defined-only "$pl" | awk '{print $3}' |
  grep -vE '^(GOMP_loop_|GOMP_parallel_loop_|__kmpc_dispatch_(init|next|fini)_|getenv$)' || true)
[ -z "$extra" ] || fail "the preload exports more than its entry points: $extra"
readelf -d "$pl" | grep -E 'NEEDED.*(libgomp|libomp|libiomp)' && fail "the preload links an OpenMP runtime"

steps=12
run() { # run OUT ERR ENV... -- PROG ARGS
  local out=$1 err=$2; shift 2
  local rc=0
  env "$@" >"$out" 2>"$err" || rc=$?
  [ "$rc" = 0 ] || { cat "$err" >&2; fail "exit status $rc of: $*"; }
}

check_binary() {
  local cc=$1 bin=$tmp/prog-$1
  echo "== $cc"
  "$cc" -fopenmp -O2 -o "$bin" "$src"
  for t in 2 1 3; do
    run "$tmp/ref" "$tmp/ref.err" OMP_NUM_THREADS=$t "$bin" $steps
    [ -s "$tmp/ref.err" ] && { cat "$tmp/ref.err" >&2; fail "$cc: the plain run wrote to stderr"; }
    grep -q 'every iteration ran exactly once' "$tmp/ref" || fail "$cc: the plain run failed"

    # lbomp takes the loops
    rm -f "$tmp/report"
    run "$tmp/out" "$tmp/err" OMP_NUM_THREADS=$t OMP_SCHEDULE=lbomp LD_PRELOAD="$preload" \
      LBOMP_PRELOAD_REPORT="$tmp/report" "$bin" $steps
    diff "$tmp/ref" "$tmp/out" || fail "$cc, $t threads: lbomp's results differ from the plain run's"
    grep -E 'libgomp:|OMP: Warning' "$tmp/err" && fail "$cc: the runtime warned about OMP_SCHEDULE"
    [ -s "$tmp/report" ] || fail "$cc: no report in LBOMP_PRELOAD_REPORT"
    balanced=$(sed -n 's/.* \([0-9]*\) loop(s) balanced by lbomp.*/\1/p' "$tmp/report")
    [ "${balanced:-0}" -ge 12 ] || { cat "$tmp/report"; fail "$cc: only ${balanced:-0} loops balanced"; }
    # the skewed loop ran every step under lbomp, with its LB steps
    grep -qE "\[0, 409[56][])] step 1 +$steps " "$tmp/report" ||
      { cat "$tmp/report"; fail "$cc: the skewed loop is not in the report with $steps runs"; }
    expect=("is ordered (" "is in a nested team" "more than 8 ranges")
    [ "$t" -gt 1 ] && expect+=("ran with a team of 1 threads where its first run had $t")
    if [ "$cc" = gcc ]; then
      expect+=("is ordered(n) (doacross" "has task reductions")
    fi
    for why in "${expect[@]}"; do
      n=$(grep -cF -- "$why" "$tmp/err" || true)
      [ "$n" = 1 ] || { cat "$tmp/err" >&2; fail "$cc, $t threads: $n lines for '$why', want 1"; }
    done
    lines=$(grep -c 'lbomp-preload: the loop at' "$tmp/err" || true)
    [ "$lines" = "${#expect[@]}" ] ||
      { cat "$tmp/err" >&2; fail "$cc, $t threads: $lines fallback lines, want ${#expect[@]}"; }
    echo "$cc, $t threads: lbomp: same results, $balanced loops balanced, $lines left to the runtime"
  done

  # a policy named in OMP_SCHEDULE; the variable reaches a child process whole
  run "$tmp/out" "$tmp/err" OMP_NUM_THREADS=2 OMP_SCHEDULE=lbomp,greedy LD_PRELOAD="$preload" \
    LBOMP_PRELOAD_REPORT="$tmp/report" sh -c '"$0" "$1" && [ "$OMP_SCHEDULE" = lbomp,greedy ]' \
    "$bin" $steps
  run "$tmp/ref" "$tmp/ref.err" OMP_NUM_THREADS=2 "$bin" $steps
  diff "$tmp/ref" "$tmp/out" || fail "$cc: lbomp,greedy results differ"
  grep -q 'policy greedy' "$tmp/report" || fail "$cc: OMP_SCHEDULE=lbomp,greedy did not choose greedy"

  # without stealing, the report's last column (chunks run by a thief) is 0 on every loop
  run "$tmp/out" "$tmp/err" OMP_NUM_THREADS=2 OMP_SCHEDULE=lbomp LBOMP_STEAL=off \
    LD_PRELOAD="$preload" LBOMP_PRELOAD_REPORT="$tmp/report" "$bin" $steps
  diff "$tmp/ref" "$tmp/out" || fail "$cc: lbomp's results without stealing differ"
  head -2 "$tmp/report" | grep -qE 'migrations +stolen$' ||
    { cat "$tmp/report"; fail "$cc: the report has no stolen column"; }
  stole=$(awk 'NR > 2 && !/runtime \(/ && $NF != 0' "$tmp/report")
  [ -z "$stole" ] || { cat "$tmp/report"; fail "$cc: LBOMP_STEAL=off, yet chunks were stolen"; }

  # any other schedule: the real runtime, unchanged, silent, no report
  for sched in dynamic,1 static guided; do
    rm -f "$tmp/report"
    run "$tmp/ref" "$tmp/ref.err" OMP_NUM_THREADS=2 OMP_SCHEDULE=$sched "$bin" $steps
    run "$tmp/out" "$tmp/err" OMP_NUM_THREADS=2 OMP_SCHEDULE=$sched LD_PRELOAD="$preload" \
      LBOMP_PRELOAD_REPORT="$tmp/report" "$bin" $steps
    diff "$tmp/ref" "$tmp/out" || fail "$cc: OMP_SCHEDULE=$sched results differ under the preload"
    [ -s "$tmp/err" ] && { cat "$tmp/err" >&2; fail "$cc: OMP_SCHEDULE=$sched wrote to stderr"; }
    [ -e "$tmp/report" ] && fail "$cc: OMP_SCHEDULE=$sched wrote a report"
  done

  # a policy lbomp does not have: one line, then every loop on the runtime
  run "$tmp/out" "$tmp/err" OMP_NUM_THREADS=2 OMP_SCHEDULE=lbomp,gredy LD_PRELOAD="$preload" \
    "$bin" $steps
  diff "$tmp/ref" "$tmp/out" || fail "$cc: lbomp,gredy results differ"
  grep -q "could not start" "$tmp/err" || { cat "$tmp/err" >&2; fail "$cc: no line for lbomp,gredy"; }
  echo "$cc: lbomp,greedy, static, dynamic,1, guided and a bad policy: same results"
}

check_binary gcc

# The libgomp entry points GCC 12 does not emit for these loops, called as their compilers do.
echo "== gcc, direct calls"
gcc -fopenmp -O2 -o "$tmp/direct" "$(dirname "$src")/direct.c"
run "$tmp/out" "$tmp/err" OMP_NUM_THREADS=2 "$tmp/direct"
run "$tmp/out" "$tmp/err" OMP_NUM_THREADS=2 OMP_SCHEDULE=lbomp LD_PRELOAD="$preload" \
  LBOMP_PRELOAD_REPORT="$tmp/report" "$tmp/direct"
grep -q "3 loop(s) balanced by lbomp, 0 left" "$tmp/report" || { cat "$tmp/report"; fail "direct calls"; }
[ -s "$tmp/err" ] && { cat "$tmp/err" >&2; fail "direct calls wrote to stderr"; }
echo "GOMP_parallel_loop_runtime_start, GOMP_loop_start, GOMP_loop_ull_start: taken, exactly once"
if command -v clang >/dev/null && echo 'int main(void){return 0;}' |
    clang -fopenmp -x c - -o "$tmp/probe" 2>/dev/null; then
  check_binary clang
else
  echo "clang with -fopenmp (LLVM's libomp) is not installed here: only the gcc build was checked"
fi
