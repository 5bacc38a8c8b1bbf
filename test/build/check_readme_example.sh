#!/usr/bin/env bash
# The README's minimal program is test/e2e/example.c, character for character.
set -euo pipefail
root=$1
extracted=$(awk '/^```c$/{f=1;next} /^```$/{if(f){exit}} f' "$root/README.md")
if ! diff <(printf '%s\n' "$extracted") "$root/test/e2e/example.c"; then
  echo "FAIL: README.md's example differs from test/e2e/example.c"; exit 1
fi
echo ok
