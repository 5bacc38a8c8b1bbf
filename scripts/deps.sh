#!/usr/bin/env bash
# Installs the Debian packages lbomp needs (scripts/packages.txt) when any is missing.
# Run as root on Debian 12; does nothing when everything is there.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
missing=()
while read -r p; do
  [ -n "$p" ] || continue
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done <"$here/packages.txt"
if [ ${#missing[@]} -gt 0 ]; then
  echo "lbomp: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
