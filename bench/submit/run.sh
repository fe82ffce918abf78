#!/bin/bash
# bench/submit: sbatch submissions per second with the idletime plugins loaded vs without, on the
# same local cluster in the same run (start.sh --no-plugins / start.sh reconfigure in between),
# printed as ratios (target >= 0.95), plus job_submit/idletime's own time per call.
#   with plugins:    sbatch --hold -A team-a --idle-resources=only --gres=gpu:a100:1   (routed by the plugins)
#   without plugins: sbatch --hold -A team-a -p idle-a100-east,idle-a100-west --gres=gpu:a100:1
#   plain, plugins loaded: the without-plugins command line (the plugins' pass-through cost)
#   routed with account_hint=yes: the routed line with sbatch's DefaultAccount RPC (plugstack
#     without account_hint=no), what a build without --with-slurm-src pays; shown, not a target
# Usage: bench/submit/run.sh [SUBMISSIONS per round, default 200] [ROUNDS, default 2]
# Env: IDLETIME_BIN, BENCH_DECIDE (built bench_decide), IDLETIME_CONFIG_FILE (default etc/idletime.json),
#      START_ARGS (more start.sh arguments, e.g. "--prefix /opt/idletime"), IDLETIME_CLUSTER_DIR.
# Cancels every job of the cluster at each round: run it when no other test uses the cluster.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CL=$REPO/testsuite/cluster
N=${1:-200}
ROUNDS=${2:-2}
CONFIG=${IDLETIME_CONFIG_FILE:-$REPO/etc/idletime.json}
# shellcheck source=../../testsuite/cluster/common.sh
. "$CL/common.sh"
[ "$(id -u)" = 0 ] || { echo "bench/submit: must run as root" >&2; exit 2; }
ic_ctld_up || { echo "bench/submit: cluster not running (testsuite/cluster/start.sh)" >&2; exit 2; }

# rate ARGS...: N sequential sbatch as alice in one shell; prints submissions/s.
rate() {
	runuser -u alice -- env SLURM_CONF="$SLURM_CONF" N="$N" bash -c '
		cd /tmp; t0=$(date +%s%N)
		for ((i = 0; i < N; i++)); do sbatch --hold -J bench-submit -o /dev/null "$@" --wrap=true >/dev/null || exit 1; done
		echo "$N $(( $(date +%s%N) - t0 ))"' bench "$@" |
		awk '{ printf "%.1f", $1 / ($2 / 1e9) }'
}
clean() { squeue -h -n bench-submit -o %i | xargs -r scancel; ic_poll 60 sh -c '[ -z "$(squeue -h -n bench-submit -o %i)" ]'; }
# shellcheck disable=SC2086 # START_ARGS is a list of words
plugins() { "$CL/start.sh" ${START_ARGS:-} "$@" --config "$CONFIG" >/dev/null 2>&1 || { echo "bench/submit: start.sh $* failed" >&2; exit 1; }; }
IDLE=(-A team-a --idle-resources=only --gres=gpu:a100:1)
PLAIN=(-A team-a -p idle-a100-east,idle-a100-west --gres=gpu:a100:1)

PLUGSTACK=$IC_ETC/plugstack.conf
# rate_hint ARGS...: rate with plugstack account_hint=yes (sbatch rereads plugstack.conf each run).
rate_hint() {
	local keep r
	keep=$(cat "$PLUGSTACK")
	sed 's/ account_hint=no//' <<<"$keep" >"$PLUGSTACK"
	r=$(rate "$@") || r=0
	printf '%s\n' "$keep" >"$PLUGSTACK"
	echo "$r"
}
sum_with=0 sum_without=0 sum_plain=0 sum_hint=0
measure_without() {
	plugins --no-plugins
	grep -q '^JobSubmitPlugins=idletime' "$IC_CONF" && { echo "bench/submit: plugins still configured" >&2; exit 1; }
	without=$(rate "${PLAIN[@]}"); clean
}
measure_with() {
	plugins
	grep -q '^JobSubmitPlugins=idletime' "$IC_CONF" || { echo "bench/submit: plugins not installed" >&2; exit 1; }
	with=$(rate "${IDLE[@]}"); clean
	plain=$(rate "${PLAIN[@]}"); clean
	hint=$(rate_hint "${IDLE[@]}"); clean
}
# Odd rounds measure without the plugins first, even rounds last: the daemons restart at each
# switch, and the order must not favour either side.
for ((r = 1; r <= ROUNDS; r++)); do
	if ((r % 2)); then measure_without; measure_with; else measure_with; measure_without; fi
	echo "round $r: without plugins $without/s, with plugins (idletime job) $with/s, with plugins (plain job) $plain/s, idletime job with account_hint=yes $hint/s"
	sum_with=$(awk -v a="$sum_with" -v b="$with" 'BEGIN { print a + b }')
	sum_without=$(awk -v a="$sum_without" -v b="$without" 'BEGIN { print a + b }')
	sum_plain=$(awk -v a="$sum_plain" -v b="$plain" 'BEGIN { print a + b }')
	sum_hint=$(awk -v a="$sum_hint" -v b="$hint" 'BEGIN { print a + b }')
done
awk -v w="$sum_with" -v wo="$sum_without" -v p="$sum_plain" -v h="$sum_hint" -v n="$N" -v r="$ROUNDS" 'BEGIN {
	printf "bench/submit: %d submissions x %d rounds; ratio idletime-routed/plain-without-plugins = %.3f, plain with/without plugins = %.3f (target >= 0.95); routed with account_hint=yes = %.3f\n", n, r, w / wo, p / wo, h / wo }'
BD=${BENCH_DECIDE:-}
[ -n "$BD" ] || for c in "$REPO/bench/submit/bench_decide" /work/build-*/bench/submit/bench_decide; do [ -x "$c" ] && BD=$c && break; done
if [ -n "$BD" ]; then "$BD" "$CONFIG" 200000; else echo "bench/submit: bench_decide not built (make bench/submit/bench_decide)"; fi
grep -h 'idletime/job_submit: uid' "$IC_LOGD/slurmctld.log" | tail -n 1 || true
