#!/bin/bash
# bench/jobs: `idletime jobs` over N jobs (default 10,000) vs `squeue` over the same jobs, same
# run, same user (root), output to /dev/null; prints the median of R timed runs of each and the
# ratio idletime/squeue (target <= 2.0).
# The jobs are held (sbatch --hold, 4 parallel submitters) 1-GPU jobs of alice (team-a), half in
# quota-team-a, half idle-time (idle-a100-east,idle-a100-west), so every derivation path runs.
# Needs MaxJobCount > N: the script restarts the cluster with --extra-conf MaxJobCount=N+5000
# when slurmctld's limit is lower (start.sh is idempotent). Run it when no test uses the cluster;
# it cancels its own jobs (name bench-jobs) at the end.
# Usage: bench/jobs/run.sh [N] [R]   Env: IDLETIME_BIN (default /usr/local/bin/idletime),
# IDLETIME_PREFIX (install prefix for that restart, default start.sh's), IDLETIME_CLUSTER_DIR.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CL=$REPO/testsuite/cluster
N=${1:-10000}
R=${2:-5}
IT=${IDLETIME_BIN:-${PREFIX:-/usr/local}/bin/idletime}
CONFIG=${IDLETIME_CONFIG_FILE:-$REPO/etc/idletime.json}
# shellcheck source=../../testsuite/cluster/common.sh
. "$CL/common.sh"
[ "$(id -u)" = 0 ] || { echo "bench/jobs: must run as root" >&2; exit 2; }
[ -x "$IT" ] || { echo "bench/jobs: no idletime tool at $IT" >&2; exit 2; }
ic_ctld_up || { echo "bench/jobs: cluster not running (testsuite/cluster/start.sh)" >&2; exit 2; }

# shellcheck disable=SC2034 # used by held-jobs.sh
BENCH=bench/jobs
# shellcheck source=held-jobs.sh
. "$REPO/bench/jobs/held-jobs.sh"
trap bench_clean EXIT
bench_held_jobs

"$IT" jobs --config="$CONFIG" >/dev/null  # warm caches (passwd, libslurm) once for both
squeue >/dev/null
sq=$(median_ms squeue)
sqa=$(median_ms squeue -o '%i %j %u %a %P %T %b %r %M %N')
ij=$(median_ms "$IT" jobs --config="$CONFIG")
ijj=$(median_ms "$IT" jobs --config="$CONFIG" --json)
lines=$("$IT" jobs --config="$CONFIG" --noheader | wc -l)
[ "$lines" -ge "$N" ] || { echo "bench/jobs: idletime jobs printed $lines lines, expected >= $N" >&2; exit 1; }
awk -v n="$total" -v sq="$sq" -v sqa="$sqa" -v ij="$ij" -v ijj="$ijj" -v r="$R" 'BEGIN {
	printf "jobs in cluster:               %d\n", n
	printf "squeue (default format):       %d ms (median of %d)\n", sq, r
	printf "squeue -o (same columns):      %d ms\n", sqa
	printf "idletime jobs (table):         %d ms\n", ij
	printf "idletime jobs --json:          %d ms\n", ijj
	printf "ratio idletime jobs / squeue:  %.2f (target <= 2.0)\n", ij / sq
	printf "ratio --json / squeue:         %.2f\n", ijj / sq
}'
