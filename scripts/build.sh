#!/usr/bin/env bash
# Configures (once) and builds lbomp into the folder given (default build/).
set -euo pipefail
dir=${1:-build}
shift || true
if [ ! -f "$dir/build.ninja" ]; then
  meson setup "$dir" "$@" >/dev/null
fi
meson compile -C "$dir" >/dev/null
