#!/usr/bin/env bash
# Runs one libFuzzer target briefly over its committed corpus (read-only: new inputs go to a
# temporary folder). Usage: run_fuzz.sh TARGET|none CORPUS_DIR [libFuzzer flags...]
# "none": clang's fuzzer runtime is missing, the test is skipped (77) with the reason.
set -euo pipefail
exe=$1 corpus=$2
shift 2
if [ "$exe" = none ]; then
  echo "skipped: this compiler cannot link -fsanitize=fuzzer (needs clang and its libFuzzer runtime)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
set +e
# -close_fd_mask=3: the targets' own messages (every refused value prints one) stay out of the
# log; libFuzzer and the sanitizers keep a copy of stderr for their reports.
"$exe" -runs="${FUZZ_RUNS:-20000}" -max_total_time="${FUZZ_SECONDS:-20}" -close_fd_mask=3 \
  -artifact_prefix="$work/" "$@" "$work" "$corpus" 2>"$work/log"
rc=$?
set -e
grep -E '^(#[0-9]+ *(INITED|DONE)|Done|INFO: (seed|Loaded))' "$work/log" || true
if [ $rc -ne 0 ]; then
  cat "$work/log" | tail -60
  for a in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
    [ -e "$a" ] || continue
    echo "FAIL: $(basename "$exe") found $(basename "$a"); keep it in $corpus once fixed:"
    base64 -w0 "$a"; echo
  done
  exit 1
fi
echo "ok: $(basename "$exe") over $(ls "$corpus" | wc -l) corpus inputs"
