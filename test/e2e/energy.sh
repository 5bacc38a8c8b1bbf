#!/bin/sh
# energy.sh — end-to-end proof of the energy figures. A fake RAPL package, raised by 1 J every
# 10 ms (100 W) and wrapping at max_energy_range_uj, is read by kneighbor through
# LBOMP_POWERCAP_ROOT: its energy_j must match what the writer wrote during the run within 10 %,
# and the text report must give the reader and about 100 W per window. Then the host without the
# variable: either a reader, or "energy_j": null with an energy_note that gives the reason.
#
# usage: energy.sh KNEIGHBOR FAKE_RAPL_WRITER
set -u
kn=$1
writer=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/lbomp-e2e-energy.XXXXXX") || exit 99
wpid=
cleanup() {
        if [ -n "$wpid" ]; then
                kill "$wpid" 2>/dev/null
                wait "$wpid" 2>/dev/null
        fi
        rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail() {
        echo "FAIL: $*" >&2
        exit 1
}
# The value of a JSON key in a one-line object: a number, null, or a string without quotes.
json_num() { sed -n "s/.*\"$1\":\([^,}]*\).*/\1/p"; }
json_str() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }

start_writer() {
        # A 50 J range starting 5 J before its end: the counter wraps 50 ms after the start and
        # every 500 ms after that, so every run below crosses several wraps.
        "$writer" --root "$tmp/powercap" --log "$tmp/written" --max 49999999 --start 45000000 \
                --timeout-s 120 &
        wpid=$!
        i=0
        while [ ! -s "$tmp/written" ]; do
                i=$((i + 1))
                [ $i -le 100 ] || fail "the fake RAPL writer did not start"
                sleep 0.05
        done
}

stop_writer() {
        kill "$wpid"
        wait "$wpid" 2>/dev/null
        wpid=
}

# 1. kneighbor's energy_j against the energy written while it ran.
start_writer
before=$(cat "$tmp/written")
LBOMP_POWERCAP_ROOT="$tmp/powercap" "$kn" --iters 100 --json >"$tmp/fake.json" 2>"$tmp/err" ||
        fail "kneighbor failed: $(cat "$tmp/err")"
after=$(cat "$tmp/written")
line=$(tail -n 1 "$tmp/fake.json")
energy=$(printf '%s\n' "$line" | json_num energy_j)
note=$(printf '%s\n' "$line" | json_str energy_note)
written=$(awk -v a="$after" -v b="$before" 'BEGIN { printf "%.3f", (a - b) / 1e6 }')
echo "fake package: energy_j $energy J, written during the run $written J; energy_note: $note"
[ -n "$energy" ] && [ "$energy" != null ] || fail "energy_j is '$energy' with a fake tree: $note"
case "$note" in
"powercap: $tmp/powercap, 1 package, 1 domain"*) ;;
*) fail "energy_note does not name the powercap reader and the tree: '$note'" ;;
esac
awk -v w="$written" 'BEGIN { exit !(w >= 50) }' ||
        fail "the run lasted too little ($written J written) to cross a wrap"
awk -v e="$energy" -v w="$written" 'BEGIN { d = e - w; if (d < 0) d = -d; exit !(d <= 0.1 * w) }' ||
        fail "energy_j $energy J is not within 10 % of the $written J written"
awk -v e="$energy" -v w="$written" 'BEGIN { printf "  deviation %.2f %%\n", 100 * (e - w) / w }'

# 2. The text report: one energy line with the reader, and each window near 100 W. Windows of
# 20 steps (about 0.4 s) keep the writer's scheduling jitter (a tick or two) well inside 30 %.
LBOMP_POWERCAP_ROOT="$tmp/powercap" "$kn" --iters 40 --period 20 >"$tmp/fake.txt" 2>"$tmp/err" ||
        fail "kneighbor (text) failed: $(cat "$tmp/err")"
stop_writer
grep -q "^  energy: powercap: $tmp/powercap, 1 package, 1 domain; packages .* J over .* s, .* W; package-0 .* J\$" "$tmp/fake.txt" ||
        fail "no energy line naming the reader in the report: $(grep energy "$tmp/fake.txt")"
# window-W is the 11th column of the LB table (lb step policy λb λa moves decide apply locality J W)
watts=$(awk '/^ +lb +step/ { t = 1; next } t && /^ +[0-9]+ / { print $11 } /^  total:/ { t = 0 }' "$tmp/fake.txt")
[ -n "$watts" ] || fail "no LB step lines in the report"
for w in $watts; do
        awk -v w="$w" 'BEGIN { exit !(w >= 70 && w <= 130) }' ||
                fail "a window reports $w W for a package drawing 100 W: $watts"
done
echo "  per-window power:" $watts

# 3. The host, without the variable.
env -u LBOMP_POWERCAP_ROOT "$kn" --iters 5 --json >"$tmp/host.json" 2>"$tmp/err" ||
        fail "kneighbor on the host failed: $(cat "$tmp/err")"
line=$(tail -n 1 "$tmp/host.json")
energy=$(printf '%s\n' "$line" | json_num energy_j)
note=$(printf '%s\n' "$line" | json_str energy_note)
echo "host: energy_j $energy; energy_note: $note"
if [ "$energy" = null ]; then
        case "$note" in
        "unavailable: "?*) ;;
        *) fail "energy_j is null but energy_note gives no reason: '$note'" ;;
        esac
else
        case "$note" in
        powercap:* | perf:* | msr:*) ;;
        *) fail "energy_j is $energy but energy_note names no reader: '$note'" ;;
        esac
fi
if [ ! -e /sys/class/powercap ] && [ ! -e /sys/bus/event_source/devices/power ] &&
        ! ls /dev/cpu/*/msr >/dev/null 2>&1; then
        # A machine without any counter, like the development machines: the answer is known.
        [ "$energy" = null ] || fail "energy_j is $energy on a machine without RAPL"
        case "$note" in
        "unavailable: /sys/class/powercap not present; perf: "*"; msr: "*) ;;
        *) fail "energy_note does not say why: '$note'" ;;
        esac
        env -u LBOMP_POWERCAP_ROOT "$kn" --iters 5 | grep -q '^  energy: unavailable: /sys/class/powercap not present' ||
                fail "the text report has no 'energy: unavailable: <reason>' line"
fi
echo "ok"
