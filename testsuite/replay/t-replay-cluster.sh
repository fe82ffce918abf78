#!/bin/sh
# A short replay (2 trace hours at 120x: 60 s per configuration, about 5 minutes in all) on the
# real local cluster: exit 0 (every invariant held), all report files there, runs in the right
# partitions. Needs root, a free cluster (testsuite/cluster/start.sh) and the installed plugins.
# Usage: testsuite/replay/t-replay-cluster.sh [BUILD_DIR]
set -u
BUILD=$(cd "${1:-.}" && pwd)
REPO=$(cd "$(dirname "$0")/../.." && pwd)
TRACE=$REPO/../shared/traces/alibaba-gpu-v2023-openb/openb_pod_list_gpuspec33.csv
OUT=$(mktemp -d /var/tmp/t-replay.XXXXXX)
export IDLETIME_BIN=${IDLETIME_BIN:-$BUILD/tools/idletime}
fail() { echo "FAIL t-replay-cluster: $*"; exit 1; }
"$BUILD/tools/replay/idletime-replay" run --trace "$TRACE" --out "$OUT" --window-len 7200 \
	--compress 120 --requeue-delay 10 >"$OUT/log" 2>&1 || fail "exit $?: $(tail -5 "$OUT/log")"
for f in report.md summary.csv alloc.png alloc.svg waits.png lost.png quota-C.png A/runs.csv B/runs.csv C/runs.csv; do
	[ -s "$OUT/$f" ] || fail "$f missing"
done
[ "$(awk -F, 'NR>1 && $27==0' "$OUT/summary.csv" | wc -l)" -eq 3 ] || fail "violations in summary.csv"
# A never uses idle partitions; B and C run every idle-time job's runs in idle-<pool>.
awk -F, 'NR>1 && $10 ~ /^idle-/' "$OUT/A/runs.csv" | grep -q . && fail "A ran a job in an idle partition"
for c in B C; do
	awk -F, 'NR>1 && $2=="idle" && $10 !~ /^idle-/' "$OUT/$c/runs.csv" | grep -q . && fail "$c ran an idle-time job in quota"
done
rm -rf "$OUT"
echo "PASS t-replay-cluster"
