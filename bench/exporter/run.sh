#!/bin/bash
# bench/exporter: cost of one idletime-exporter scrape (GET /metrics) over N jobs (default
# 10,000) vs `squeue` over the same jobs, same run, as root, output to /dev/null; prints the
# median of R timed runs of each and the ratio scrape/squeue.
# The jobs are those of bench/jobs (held 1-GPU jobs of alice, named bench-jobs, half in
# quota-team-a, half idle-time); it submits them when fewer are there and cancels them at the end.
# Needs MaxJobCount > N (restarts the cluster with a higher one, as bench/jobs does).
# Usage: bench/exporter/run.sh [N] [R]   Env: IDLETIME_BIN (default /usr/local/bin/idletime),
# IDLETIME_EXPORTER (default the sbin next to it), IDLETIME_PREFIX, IDLETIME_CLUSTER_DIR.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CL=$REPO/testsuite/cluster
N=${1:-10000}
R=${2:-5}
IT=${IDLETIME_BIN:-${PREFIX:-/usr/local}/bin/idletime}
EXP=${IDLETIME_EXPORTER:-$(dirname "$(dirname "$IT")")/sbin/idletime-exporter}
CONFIG=${IDLETIME_CONFIG_FILE:-$REPO/etc/idletime.json}
# shellcheck source=../../testsuite/cluster/common.sh
. "$CL/common.sh"
[ "$(id -u)" = 0 ] || { echo "bench/exporter: must run as root" >&2; exit 2; }
[ -x "$EXP" ] || { echo "bench/exporter: no idletime-exporter at $EXP" >&2; exit 2; }
ic_ctld_up || { echo "bench/exporter: cluster not running (testsuite/cluster/start.sh)" >&2; exit 2; }

# shellcheck disable=SC2034 # used by held-jobs.sh
BENCH=bench/exporter
# shellcheck source=../jobs/held-jobs.sh
. "$REPO/bench/jobs/held-jobs.sh"
trap bench_clean EXIT
bench_held_jobs
log=$(mktemp)
"$EXP" --config="$CONFIG" --listen=127.0.0.1:0 2>"$log" &
epid=$!
trap 'kill "$epid" 2>/dev/null; rm -f "$log"; bench_clean' EXIT
ic_poll 10 grep -q 'serving /metrics' "$log" || { cat "$log" >&2; exit 1; }
url=http://127.0.0.1:$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$log")/metrics

curl -sf "$url" >/dev/null  # warm caches once for both
squeue >/dev/null
sq=$(median_ms squeue)
sc=$(median_ms curl -sf "$url")
once=$(median_ms "$EXP" --config="$CONFIG" --once)
held=$(curl -sf "$url" | sed -n 's/^idletime_slurm_jobs //p')
[ "${held:-0}" -ge "$N" ] || { echo "bench/exporter: scrape saw $held jobs, expected >= $N" >&2; exit 1; }
awk -v n="$total" -v sq="$sq" -v sc="$sc" -v once="$once" -v r="$R" 'BEGIN {
	printf "jobs in cluster:                 %d\n", n
	printf "squeue (default format):         %d ms (median of %d)\n", sq, r
	printf "GET /metrics (running exporter): %d ms\n", sc
	printf "idletime-exporter --once:        %d ms (includes start and config load)\n", once
	printf "ratio scrape/squeue:             %.2f\n", sc / (sq > 0 ? sq : 1)
}'
