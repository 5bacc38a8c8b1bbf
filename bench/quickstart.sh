#!/usr/bin/env bash
# The README's first command: installs what is missing, builds, and runs the kNeighbor benchmark
# under every policy (hotspot load, 2 threads), printing a comparison table.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh build
exec bash bench/compare.sh build "$@"
