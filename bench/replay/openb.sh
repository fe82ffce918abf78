#!/bin/sh
# Reproduces doc/replay/openb/: replays the Alibaba openb trace on the local cluster under
# configurations A, B, C, D (root; about 20 minutes; the cluster must be free of other jobs).
# Usage: bench/replay/openb.sh [BUILD_DIR]   (default: the current directory, a configured build)
# Env: OUT (run directory, default /var/tmp/idletime-replay-openb), IDLETIME_BIN (for start.sh),
# PREFIX (where the plugins are installed, default /usr/local), CLUSTER_DIR (the cluster's state dir).
set -eu
BUILD=$(cd "${1:-.}" && pwd)
REPO=$(cd "$(dirname "$0")/../.." && pwd)
TRACE=$REPO/../shared/traces/alibaba-gpu-v2023-openb/openb_pod_list_gpuspec33.csv
OUT=${OUT:-/var/tmp/idletime-replay-openb}
DOC=$REPO/doc/replay/openb
export IDLETIME_BIN=${IDLETIME_BIN:-$BUILD/tools/idletime}
rc=0
"$BUILD/tools/replay/idletime-replay" run --trace "$TRACE" --out "$OUT" \
	--window-start 12100000 --window-len 43200 --compress 240 --sample 0.8 --seed 1 --teams 2 \
	--requeue-delay 10 --prefix "${PREFIX:-/usr/local}" \
	--cluster-dir "${CLUSTER_DIR:-${IDLETIME_CLUSTER_DIR:-/var/tmp/idletime-cluster}}" || rc=$?
mkdir -p "$DOC"
for f in report.md summary.csv mapping.md quotas.csv jobs.csv alloc.png alloc.svg waits.png waits.svg lost.png lost.svg quota-A.png quota-B.png quota-C.png quota-D.png; do
	[ ! -f "$OUT/$f" ] || cp "$OUT/$f" "$DOC/"
done
for c in A B C D; do
	[ -d "$OUT/$c" ] || continue
	mkdir -p "$DOC/$c"
	for f in alloc.csv runs.csv; do [ ! -f "$OUT/$c/$f" ] || cp "$OUT/$c/$f" "$DOC/$c/"; done
done
exit $rc
