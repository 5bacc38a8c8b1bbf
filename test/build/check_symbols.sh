#!/usr/bin/env bash
# Only the public API escapes the shared library: every exported function starts with lbomp_ and
# none with the internal prefix lbomp__.
set -euo pipefail
lib=$1
syms=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | sed 's/@.*//' | sort -u)
bad=$(grep -v -E '^lbomp_[a-z]' <<<"$syms" | grep -v -E '^(_init|_fini|LBOMP_0\.1)$' || true)
internal=$(grep -E '^lbomp__' <<<"$syms" || true)
echo "$(wc -l <<<"$syms") exported symbols"
if [ -n "$bad$internal" ]; then
  echo "FAIL: symbols that should not be exported:"; echo "$bad"; echo "$internal"; exit 1
fi
for s in lbomp_create lbomp_destroy lbomp_step lbomp_iter_next lbomp_strerror; do
  grep -qx "$s" <<<"$syms" || { echo "FAIL: $s not exported"; exit 1; }
done
echo ok
