#!/usr/bin/env bash
# Configures (once) and builds lbomp into the folder given (default build/). Quiet when it works;
# when it fails, the compiler's output is shown (ninja writes it to stdout).
set -euo pipefail
dir=${1:-build}
shift || true
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if [ ! -f "$dir/build.ninja" ]; then
  meson setup "$dir" "$@" >"$log" 2>&1 || { cat "$log"; exit 1; }
fi
meson compile -C "$dir" >"$log" 2>&1 || { grep -v '^\[[0-9]*/[0-9]*\] ' "$log" | tail -n 60; exit 1; }
