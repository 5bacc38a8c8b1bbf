#!/usr/bin/env bash
# The README's second command, and what CI runs: installs what is missing, builds, and runs every
# test suite (unit, stress, e2e, build, mpi); then the same code under the sanitizers, each in its own
# build folder:
#   build-asan  gcc, AddressSanitizer + UndefinedBehaviorSanitizer: suites unit, e2e and mpi (the
#               MPI ranks under the sanitizers, Open MPI's own leaks suppressed: test/mpi/lsan.supp);
#   build-tsan  clang with LLVM's libomp, ThreadSanitizer (OpenMP made visible to it by the Archer
#               tool, see test/meson.build): suite stress;
#   build-fuzz  clang, libFuzzer + ASan/UBSan: a short run of every fuzz target over its corpus
#               (test/fuzz/corpus/<target>/).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
werror=${CI:+-Dwerror=true}
t0=$SECONDS
step() { echo "== $* ($((SECONDS - t0)) s so far)"; }

step "plain build: every suite"
bash scripts/build.sh build $werror
meson test -C build --print-errorlogs

step "ASan+UBSan build: unit, e2e and mpi"
bash scripts/build.sh build-asan -Db_sanitize=address,undefined -Db_lundef=false $werror
meson test -C build-asan --suite unit --suite e2e --suite mpi --print-errorlogs

step "TSan build (clang, libomp + Archer): stress"
CC=clang CXX=clang++ bash scripts/build.sh build-tsan -Db_sanitize=thread -Db_lundef=false $werror
meson test -C build-tsan --suite stress --print-errorlogs

step "libFuzzer build: fuzz smoke runs"
CC=clang CXX=clang++ bash scripts/build.sh build-fuzz -Dfuzz=true -Db_sanitize=address,undefined \
  -Db_lundef=false -Dc_args=-fsanitize=fuzzer-no-link $werror
meson test -C build-fuzz --suite fuzz --print-errorlogs
step "all passed"

# One closing line over the four builds, in the plain form any reader understands.
python3 - build build-asan build-tsan build-fuzz <<'PY'
import json, sys
n = {"OK": 0, "FAIL": 0, "SKIP": 0}
for d in sys.argv[1:]:
    for line in open(f"{d}/meson-logs/testlog.json"):
        r = json.loads(line)["result"]
        key = "OK" if r in ("OK", "EXPECTEDFAIL") else "SKIP" if r == "SKIP" else "FAIL"
        n[key] += 1
print(f"tests: {n['OK']} passed, {n['FAIL']} failed, {n['SKIP']} skipped")
PY
