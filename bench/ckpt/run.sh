#!/bin/sh
# bench/ckpt: async-save stall vs memcpy (target <= 1.5x) and persist throughput vs
# dd conv=fsync of the same size in the same directory (target >= 0.7x), in one invocation.
# Usage: bench/ckpt/run.sh [BUILD_DIR] [DIR] [MIB] [ROUNDS]   (defaults: ., /var/tmp, 256, 5)
set -eu
build=${1:-.}
base=${2:-/var/tmp}
mib=${3:-256}
rounds=${4:-5}
bin=$build/bench/ckpt/ckpt_bench
[ -x "$bin" ] || { echo "idletime/ckpt-bench: $bin not built (make bench/ckpt/ckpt_bench)" >&2; exit 2; }
work=$(mktemp -d "$base/idletime-ckpt-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
out=$("$bin" "$work/ck" "$mib" "$rounds")
echo "$out"
# dd of the same bytes, as many rounds, median seconds.
dd_s=$(for i in $(seq "$rounds"); do
    dd if=/dev/zero of="$work/dd" bs=1M count="$mib" conv=fsync 2>&1 |
        sed -n 's/.* copied, \([0-9.]*\) s.*/\1/p'
    rm -f "$work/dd"
done | sort -n | sed -n "$(( (rounds + 1) / 2 ))p")
get() { echo "$out" | sed -n "s/^$1 //p"; }
bytes=$(get bytes)
echo "dd_MBps $(echo "scale=1; $bytes / 1000000 / $dd_s" | bc)"
stall_ratio=$(echo "scale=3; $(get stall_ms) / $(get memcpy_ms)" | bc)
tput_ratio=$(echo "scale=3; $(get persist_MBps) / ($bytes / 1000000 / $dd_s)" | bc)
echo "stall_vs_memcpy ${stall_ratio}x (target <= 1.5)"
echo "persist_vs_dd ${tput_ratio}x (target >= 0.7)"
