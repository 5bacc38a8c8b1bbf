#!/usr/bin/env bash
# The reliability issue's acceptance, run as written for every registered policy: on one CPU with
# four threads (taskset -c 0, OMP_NUM_THREADS=4: binding narrowed, team oversubscribed), kneighbor
# completes with the same checksum as --policy none. Skipped (77) without taskset.
set -euo pipefail
kn=$1
command -v taskset >/dev/null || { echo "skipped: no taskset"; exit 77; }
checksum() { python3 -c 'import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])["checksum"])'; }
policies=$(LBOMP_POLICY=help "$kn" 2>/dev/null | awk '{print $1}')
[ -n "$policies" ] || { echo "FAIL: LBOMP_POLICY=help listed no policy"; exit 1; }
ref=$(taskset -c 0 env OMP_NUM_THREADS=4 "$kn" --policy none --json | checksum)
echo "none: checksum $ref"
fail=0
for p in $policies; do
  [ "$p" = none ] && continue
  got=$(taskset -c 0 env OMP_NUM_THREADS=4 "$kn" --policy "$p" --json | checksum)
  echo "$p: checksum $got"
  [ "$got" = "$ref" ] || { echo "FAIL: $p checksum $got != none $ref"; fail=1; }
done
exit $fail
