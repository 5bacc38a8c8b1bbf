#!/usr/bin/env bash
# Regenerates the hwloc XML machine profiles of this folder from scratch, with the
# Debian hwloc 2.x tools only (lstopo, hwloc-annotate): a synthetic description gives
# the tree (packages, NUMA nodes, caches, cores, one PU per core), hwloc-annotate adds
# the CPU identity and the NUMA latency matrix (ACPI SLIT values, as Linux reports them).
# The output is deterministic: running it twice gives identical files.
# README.md says, per file, where the shape and the distances come from.
#
# usage: make-profiles.sh [OUTDIR]      (default: the folder holding this script)

set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${1:-$here}

for tool in lstopo hwloc-annotate; do
	command -v "$tool" >/dev/null || {
		echo "make-profiles: '$tool' not found; install the Debian package 'hwloc'" >&2
		exit 1
	}
done
version=$(lstopo --version | awk '{print $2}')
case $version in
2.*) ;;
*)
	echo "make-profiles: lstopo $version found, hwloc 2.x needed (distances2 XML)" >&2
	exit 1
	;;
esac

mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# hwloc_distances kind: HWLOC_DISTANCES_KIND_FROM_OS (1) | HWLOC_DISTANCES_KIND_MEANS_LATENCY (4),
# the kind and name Linux's sysfs/ACPI SLIT matrix gets in hwloc 2.
SLIT_KIND=5

# slit_two_level NODES_PER_SOCKET SOCKETS LOCAL SAME_SOCKET OTHER_SOCKET
# prints the row-major matrix where nodes n and m are in the same socket iff
# n / NODES_PER_SOCKET == m / NODES_PER_SOCKET.
slit_two_level() {
	local per=$1 sockets=$2 local_d=$3 same=$4 other=$5 n m row
	local total=$((per * sockets))
	for ((n = 0; n < total; n++)); do
		row=""
		for ((m = 0; m < total; m++)); do
			if ((n == m)); then
				row+="$local_d "
			elif ((n / per == m / per)); then
				row+="$same "
			else
				row+="$other "
			fi
		done
		echo "${row% }"
	done
}

# slit_uv2000: the 24-node SLIT of an SGI UV 2000 with 12 blades of 2 x E5-4640, as
# recorded by hwloc on such a machine (hwloc test suite, 192em64t-24n8c2t.xml).
# 10 = local, 50 = the other socket of the same blade (through the blade's UV hub),
# 65 = a blade one NUMAlink hop away, 79 = a blade two hops away.
slit_uv2000() {
	cat <<'EOF'
10 50 65 65 65 65 65 65 65 65 79 79 65 65 79 79 65 65 79 79 79 79 79 79
50 10 65 65 65 65 65 65 65 65 79 79 65 65 79 79 65 65 79 79 79 79 79 79
65 65 10 50 65 65 65 65 79 79 65 65 79 79 65 65 79 79 65 65 79 79 79 79
65 65 50 10 65 65 65 65 79 79 65 65 79 79 65 65 79 79 65 65 79 79 79 79
65 65 65 65 10 50 65 65 65 65 79 79 65 65 79 79 79 79 79 79 65 65 79 79
65 65 65 65 50 10 65 65 65 65 79 79 65 65 79 79 79 79 79 79 65 65 79 79
65 65 65 65 65 65 10 50 79 79 65 65 79 79 65 65 79 79 79 79 79 79 65 65
65 65 65 65 65 65 50 10 79 79 65 65 79 79 65 65 79 79 79 79 79 79 65 65
65 65 79 79 65 65 79 79 10 50 65 65 65 65 65 65 65 65 79 79 79 79 79 79
65 65 79 79 65 65 79 79 50 10 65 65 65 65 65 65 65 65 79 79 79 79 79 79
79 79 65 65 79 79 65 65 65 65 10 50 65 65 65 65 79 79 65 65 79 79 79 79
79 79 65 65 79 79 65 65 65 65 50 10 65 65 65 65 79 79 65 65 79 79 79 79
65 65 79 79 65 65 79 79 65 65 65 65 10 50 65 65 79 79 79 79 65 65 79 79
65 65 79 79 65 65 79 79 65 65 65 65 50 10 65 65 79 79 79 79 65 65 79 79
79 79 65 65 79 79 65 65 65 65 65 65 65 65 10 50 79 79 79 79 79 79 65 65
79 79 65 65 79 79 65 65 65 65 65 65 65 65 50 10 79 79 79 79 79 79 65 65
65 65 79 79 79 79 79 79 65 65 79 79 79 79 79 79 10 50 65 65 65 65 65 65
65 65 79 79 79 79 79 79 65 65 79 79 79 79 79 79 50 10 65 65 65 65 65 65
79 79 65 65 79 79 79 79 79 79 65 65 79 79 79 79 65 65 10 50 65 65 65 65
79 79 65 65 79 79 79 79 79 79 65 65 79 79 79 79 65 65 50 10 65 65 65 65
79 79 79 79 65 65 79 79 79 79 79 79 65 65 79 79 65 65 65 65 10 50 65 65
79 79 79 79 65 65 79 79 79 79 79 79 65 65 79 79 65 65 65 65 50 10 65 65
79 79 79 79 79 79 65 65 79 79 79 79 79 79 65 65 65 65 65 65 65 65 10 50
79 79 79 79 79 79 65 65 79 79 79 79 79 79 65 65 65 65 65 65 65 65 50 10
EOF
}

# add_distances FILE NODES < matrix: attach the matrix to the NUMA nodes of FILE,
# in the hwloc-annotate distances file format (name, kind, count, objects, values).
add_distances() {
	local file=$1 nodes=$2 spec=$tmp/distances n
	{
		echo "name=NUMALatency"
		echo "$SLIT_KIND"
		echo "$nodes"
		for ((n = 0; n < nodes; n++)); do echo "NUMANode:$n"; done
		tr -s ' ' '\n' | grep -v '^$'
	} >"$spec"
	local values=$(($(wc -l <"$spec") - 3 - nodes))
	if ((values != nodes * nodes)); then
		echo "make-profiles: $file: $values distance values, expected $((nodes * nodes))" >&2
		exit 1
	fi
	# hwloc-annotate exits 0 even when hwloc rejects the matrix: treat any output as an error.
	local msg
	msg=$(hwloc-annotate "$file" "$file" -- root -- distances "$spec" 2>&1)
	if [[ -n $msg ]]; then
		echo "make-profiles: $file: hwloc-annotate: $msg" >&2
		exit 1
	fi
}

# profile NAME SYNTHETIC VENDOR FAMILY MODELNUMBER MODELSTRING
# builds $tmp/NAME.xml: the tree plus CPU identity on every package and a root note.
profile() {
	local name=$1 synthetic=$2 vendor=$3 family=$4 model_number=$5 model=$6
	local f=$tmp/$name.xml
	lstopo --if synthetic --input "$synthetic" --of xml -f "$f"
	hwloc-annotate "$f" "$f" Package:all info CPUVendor "$vendor"
	hwloc-annotate "$f" "$f" Package:all info CPUFamilyNumber "$family"
	hwloc-annotate "$f" "$f" Package:all info CPUModelNumber "$model_number"
	hwloc-annotate "$f" "$f" Package:all info CPUModel "$model"
	hwloc-annotate "$f" "$f" Machine:0 info lbompProfile "$name"
	hwloc-annotate "$f" "$f" Machine:0 info lbompProfileSource \
		"constructed by numa-profiles/make-profiles.sh (synthetic topology + SLIT values), not captured on the machine; see numa-profiles/README.md"
}

# Caches: L1d/L1i/L2 per core, L3 as Linux reports it (per package, or per CCX on AMD).
# One PU per core everywhere: SMT is left out (see README).

# 1. Intel Xeon X3440 (Lynnfield), 1 socket x 4 cores, one NUMA node (UMA).
#    hwloc refuses a 1x1 distance matrix, so this profile has none (see README).
profile xeon-x3440 \
	"pack:1 [numa(memory=16GiB)] l3:1(size=8MiB) l2:4(size=256KiB) l1d:1(size=32KiB) l1i:1(size=32KiB) core:1 pu:1" \
	GenuineIntel 6 30 "Intel(R) Xeon(R) CPU X3440 @ 2.53GHz"

# 2. 2 x Intel Xeon E5-2695 v2 (Ivy Bridge-EP), 2 x 12 cores, 2 NUMA nodes.
profile xeon-e5-2695v2-2s \
	"pack:2 [numa(memory=32GiB)] l3:1(size=30MiB) l2:12(size=256KiB) l1d:1(size=32KiB) l1i:1(size=32KiB) core:1 pu:1" \
	GenuineIntel 6 62 "Intel(R) Xeon(R) CPU E5-2695 v2 @ 2.40GHz"
slit_two_level 1 2 10 10 21 | add_distances "$tmp/xeon-e5-2695v2-2s.xml" 2

# 3. 2 x Intel Xeon E5-2640 v4 (Broadwell-EP), 2 x 10 cores, 2 NUMA nodes.
profile xeon-e5-2640v4-2s \
	"pack:2 [numa(memory=64GiB)] l3:1(size=25MiB) l2:10(size=256KiB) l1d:1(size=32KiB) l1i:1(size=32KiB) core:1 pu:1" \
	GenuineIntel 6 79 "Intel(R) Xeon(R) CPU E5-2640 v4 @ 2.40GHz"
slit_two_level 1 2 10 10 21 | add_distances "$tmp/xeon-e5-2640v4-2s.xml" 2

# 4. SGI UV 2000: 12 blades x 2 sockets (Xeon E5-4640, 8 cores), one NUMA node per socket.
profile sgi-uv2000-24n \
	"group:12 pack:2 [numa(memory=32GiB)] l3:1(size=20MiB) l2:8(size=256KiB) l1d:1(size=32KiB) l1i:1(size=32KiB) core:1 pu:1" \
	GenuineIntel 6 45 "Intel(R) Xeon(R) CPU E5-4640 0 @ 2.40GHz"
hwloc-annotate "$tmp/sgi-uv2000-24n.xml" "$tmp/sgi-uv2000-24n.xml" Group0:all subtype Blade
slit_uv2000 | add_distances "$tmp/sgi-uv2000-24n.xml" 24

# 5. 2 x AMD EPYC 7742 (Rome) in NPS4: 8 NUMA nodes (quadrants) x 16 cores,
#    4 CCX of 4 cores (16 MiB L3 each) per node. The node is a Group, as hwloc shows it.
profile epyc-7742-2s-nps4 \
	"pack:2 group:4 [numa(memory=32GiB)] l3:4(size=16MiB) l2:4(size=512KiB) l1d:1(size=32KiB) l1i:1(size=32KiB) core:1 pu:1" \
	AuthenticAMD 23 49 "AMD EPYC 7742 64-Core Processor"
slit_two_level 4 2 10 12 32 | add_distances "$tmp/epyc-7742-2s-nps4.xml" 8

# 6. 2 x Intel Xeon Platinum 8480+ (Sapphire Rapids) in SNC4: 8 NUMA nodes x 14 cores.
#    Linux reports one L3 (105 MiB) per package even in SNC mode; each SNC node is a Group.
profile xeon-8480-2s-snc4 \
	"pack:2 l3:1(size=105MiB) group:4 [numa(memory=64GiB)] l2:14(size=2MiB) l1d:1(size=48KiB) l1i:1(size=32KiB) core:1 pu:1" \
	GenuineIntel 6 143 "Intel(R) Xeon(R) Platinum 8480+"
slit_two_level 4 2 10 12 21 | add_distances "$tmp/xeon-8480-2s-snc4.xml" 8

# cpukind FILE CPUSET EFFICIENCY NAME=VALUE...: a CPU kind (hwloc 2.4+ <cpukind>), as hwloc's
# Linux backend records it on a hybrid processor: the kind's cores, its efficiency rank (higher
# = faster) and its infos (CoreType from CPUID leaf 0x1a, frequencies from cpufreq).
cpukind() {
	local file=$1 set=$2 eff=$3 kv
	shift 3
	for kv in "$@"; do
		hwloc-annotate "$file" "$file" -- root -- cpukind "$set" "$eff" 0 "${kv%%=*}" "${kv#*=}"
	done
}

# 7. Intel Core i9-12900K (Alder Lake), hybrid: 8 performance cores (Golden Cove, 3.2 / 5.1 GHz)
#    and 8 efficiency cores (Gracemont, 2.4 / 3.9 GHz), one NUMA node. Two CPU kinds. The tree
#    is simplified: one L2 per core for both kinds (see README).
profile intel-i9-12900k-hybrid \
	"pack:1 [numa(memory=64GiB)] l3:1(size=30MiB) l2:16(size=1280KiB) l1d:1(size=48KiB) l1i:1(size=32KiB) core:1 pu:1" \
	GenuineIntel 6 151 "12th Gen Intel(R) Core(TM) i9-12900K"
cpukind "$tmp/intel-i9-12900k-hybrid.xml" 0x0000ff00 0 CoreType=IntelAtom FrequencyMaxMHz=3900 FrequencyBaseMHz=2400
cpukind "$tmp/intel-i9-12900k-hybrid.xml" 0x000000ff 1 CoreType=IntelCore FrequencyMaxMHz=5100 FrequencyBaseMHz=3200

for f in "$tmp"/*.xml; do
	cp "$f" "$out/"
	echo "wrote $out/$(basename "$f")"
done
