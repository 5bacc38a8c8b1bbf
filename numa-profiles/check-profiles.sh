#!/usr/bin/env bash
# Checks every machine profile of this folder with the hwloc tools: the file loads with
# lstopo and hwloc-info without a warning, has the expected number of Package, NUMANode,
# Core and PU objects, and carries one NUMA latency matrix (kind 5 = from OS, latency;
# name NUMALatency) over all its NUMA nodes, with 10 on the diagonal, symmetric, and
# every off-diagonal value above 10. A single-node profile must have no matrix: hwloc
# does not store 1x1 distance matrices.
# Exits 0 when all pass, 1 with one line per failure otherwise.
#
# usage: check-profiles.sh [--regen]
#   --regen  also rebuild every profile with make-profiles.sh into a temporary folder and
#            require byte-identical files (needs the same hwloc version that made them).

set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
regen=0
for arg in "$@"; do
	case $arg in
	--regen) regen=1 ;;
	-h | --help)
		sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "check-profiles: unknown argument '$arg'; valid: --regen" >&2
		exit 2
		;;
	esac
done

for tool in lstopo hwloc-info; do
	command -v "$tool" >/dev/null || {
		echo "check-profiles: '$tool' not found; install the Debian package 'hwloc'" >&2
		exit 1
	}
done

# file -> "packages numanodes cores pus"
declare -A expect=(
	[xeon-x3440.xml]="1 1 4 4"
	[xeon-e5-2695v2-2s.xml]="2 2 24 24"
	[xeon-e5-2640v4-2s.xml]="2 2 20 20"
	[sgi-uv2000-24n.xml]="24 24 192 192"
	[epyc-7742-2s-nps4.xml]="2 8 128 128"
	[xeon-8480-2s-snc4.xml]="2 8 112 112"
	[intel-i9-12900k-hybrid.xml]="1 1 16 16"
)
# file -> CPU kinds expected, "cpuset:efficiency" each (hybrid profiles only; others have none)
declare -A kinds=(
	[intel-i9-12900k-hybrid.xml]="0x0000ff00:0 0x000000ff:1"
)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
err=$tmp/stderr

failures=0
fail() {
	echo "FAIL $1: $2"
	failures=$((failures + 1))
}

# count TYPE < hwloc-info output: the number of objects of TYPE (0 if absent)
count() {
	awk -v t="$1" '$0 ~ ("[0-9]+ " t " \\(type") {
		for (i = 1; i < NF; i++) if ($(i + 1) == t) { print $i; found = 1; exit }
	} END { if (!found) print 0 }'
}

# check_matrix FILE NODES < lstopo --distances output: prints a reason and returns 1 if bad
check_matrix() {
	awk -v n="$2" '
	/^Relative latency matrix/ {
		matrices++
		if ($0 !~ /name NUMALatency kind 5\)/) { print "matrix is not \"NUMALatency\" kind 5: " $0; bad = 1 }
		if ($0 !~ ("between " n " NUMANodes")) { print "matrix is not over " n " NUMA nodes: " $0; bad = 1 }
		next
	}
	/^Relative|^[A-Z]/ { print "unexpected distances: " $0; bad = 1; next }
	/^ index/ { next }
	NF > 0 {
		row = $1
		if (NF - 1 != n) { print "row " row " has " NF - 1 " values, expected " n; bad = 1 }
		for (j = 2; j <= NF; j++) d[row, j - 2] = $j
		rows++
	}
	END {
		if (matrices != 1) { print "found " matrices + 0 " latency matrices, expected 1"; exit 1 }
		if (rows != n) { print "found " rows + 0 " rows, expected " n; exit 1 }
		for (i = 0; i < n; i++) for (j = 0; j < n; j++) {
			if (i == j && d[i, j] != 10) { print "d[" i "][" j "]=" d[i, j] ", expected 10"; bad = 1 }
			if (i != j && d[i, j] <= 10) { print "d[" i "][" j "]=" d[i, j] ", expected > 10"; bad = 1 }
			if (d[i, j] != d[j, i]) { print "d[" i "][" j "]=" d[i, j] " but d[" j "][" i "]=" d[j, i]; bad = 1 }
		}
		exit bad
	}'
}

shopt -s nullglob
files=("$here"/*.xml)
((${#files[@]})) || fail "$here" "no *.xml profile found"
for name in "${!expect[@]}"; do
	[[ -f $here/$name ]] || fail "$name" "missing"
done

for path in "${files[@]}"; do
	name=$(basename "$path")
	if [[ -z ${expect[$name]:-} ]]; then
		fail "$name" "no expected counts: add it to the table in check-profiles.sh"
		continue
	fi
	read -r want_pkg want_numa want_core want_pu <<<"${expect[$name]}"

	if ! info=$(hwloc-info --if xml -i "$path" 2>"$err") || [[ -s $err ]]; then
		fail "$name" "hwloc-info does not load it cleanly: $(tr '\n' ' ' <"$err")"
		continue
	fi
	if ! lstopo --if xml -i "$path" --of console >/dev/null 2>"$err" || [[ -s $err ]]; then
		fail "$name" "lstopo does not load it cleanly: $(tr '\n' ' ' <"$err")"
		continue
	fi

	got_pkg=$(count Package <<<"$info")
	got_numa=$(count NUMANode <<<"$info")
	got_core=$(count Core <<<"$info")
	got_pu=$(count PU <<<"$info")
	ok=1
	for what in "Package $got_pkg $want_pkg" "NUMANode $got_numa $want_numa" \
		"Core $got_core $want_core" "PU $got_pu $want_pu"; do
		read -r type got want <<<"$what"
		if [[ $got != "$want" ]]; then
			fail "$name" "$got $type objects, expected $want"
			ok=0
		fi
	done

	dist=$(lstopo --if xml -i "$path" --of console --distances 2>&1)
	if ((want_numa == 1)); then
		if [[ -n $dist ]]; then
			fail "$name" "single NUMA node but a distance matrix is present: $dist"
			ok=0
		fi
		matrix="none (1 node; hwloc stores no 1x1 matrix)"
	elif ! why=$(check_matrix "$path" "$want_numa" <<<"$dist"); then
		fail "$name" "bad NUMA distances: $(tr '\n' ';' <<<"$why")"
		ok=0
	else
		matrix="${want_numa}x${want_numa} NUMALatency"
	fi
	want_kinds=${kinds[$name]:-}
	got_kinds=$(lstopo --if xml -i "$path" --of console --cpukinds 2>/dev/null |
		awk '/^CPU kind/ { printf "%s%s:%s", sep, $7, $5; sep = " " }')
	if [[ $got_kinds != "$want_kinds" ]]; then
		fail "$name" "CPU kinds '$got_kinds', expected '$want_kinds'"
		ok=0
	fi
	((ok)) && printf 'ok   %-24s %3s packages %3s NUMA nodes %4s cores %4s PUs, distances: %s\n' \
		"$name" "$got_pkg" "$got_numa" "$got_core" "$got_pu" "$matrix"
done

if ((regen)); then
	mkdir "$tmp/regen"
	if ! "$here/make-profiles.sh" "$tmp/regen" >/dev/null; then
		fail "make-profiles.sh" "regeneration failed"
	else
		before=$failures
		for path in "${files[@]}"; do
			name=$(basename "$path")
			if ! cmp -s "$path" "$tmp/regen/$name"; then
				fail "$name" "differs from what make-profiles.sh generates with hwloc $(lstopo --version | awk '{print $2}')"
			fi
		done
		((failures == before)) && echo "ok   regen: every profile is byte-identical to make-profiles.sh output"
	fi
fi

if ((failures)); then
	echo "check-profiles: $failures failure(s)" >&2
	exit 1
fi
echo "check-profiles: all ${#files[@]} profiles pass"
