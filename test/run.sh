#!/usr/bin/env bash
# The README's second command, and what CI runs: installs what is missing, builds, and runs every
# test suite (unit, stress, e2e, build).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh build ${CI:+-Dwerror=true}
meson test -C build --print-errorlogs
