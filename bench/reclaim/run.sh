#!/bin/bash
# bench/reclaim: how long a guaranteed (owner) job waits for GPUs lent to an idle-time job.
# Same cluster, same run, same GraceTime: N rounds "idletime" (the victim saves --save-mb MiB on
# the notice and calls release()) and N rounds "native" (the victim ignores the notice: Slurm's
# GraceTime pass, then SIGTERM, KillWait, SIGKILL). Latency = owner's own start line - its sbatch.
# Prints every round, the medians and the ratio native/idletime.
# Usage: run.sh [ROUNDS]   (default 3; a native round takes 80-90 s)
# Env: IDLETIME_CLUSTER_DIR / IDLETIME_CLUSTER_PORT_BASE (which cluster), IDLETIME_PREFIX
# (installed idletime, default /usr/local), SAVE_MB (default 256).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
IT_NAME=bench-reclaim
# shellcheck source=../../testsuite/cluster/lib.sh
. "$here/../../testsuite/cluster/lib.sh"
# shellcheck source=lib.sh
. "$here/lib.sh"
rounds=${1:-3}
save_mb=${SAVE_MB:-256}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "bench/reclaim: ROUNDS must be a positive number, not '$rounds'" >&2; exit 2; }
it_begin
rc_env || exit 1
grace=$(it_partition_field idle-a100-east GraceTime)
kw=$(scontrol show config | sed -n 's/^KillWait *= *\([0-9]*\).*/\1/p')
echo "bench/reclaim: $rounds rounds each, GraceTime=$grace KillWait=$kw, victim saves $save_mb MiB on the notice"

idle=() native=()
for i in $(seq "$rounds"); do
	rc_preempt_round probe-exec.sh release "bench-rel" --save-mb "$save_mb" || { echo "idletime round $i failed" >&2; exit 1; }
	t=$(rc_sub "$RC_T_START" "$RC_T_SUBMIT")
	idle+=("$t")
	printf 'idletime round %d: owner started %s s after sbatch (notice %s s, save %s s)\n' "$i" "$t" \
		"$(rc_sub "$RC_T_NOTICE" "$RC_T_SUBMIT")" "$RC_SAVE_S"
	it_cleanup_jobs || exit 1
	RC_OWNER_TIMEOUT=300 rc_preempt_round probe-exec.sh ignore "bench-native" --save-mb 1 || { echo "native round $i failed" >&2; exit 1; }
	t=$(rc_sub "$RC_T_START" "$RC_T_SUBMIT")
	native+=("$t")
	printf 'native   round %d: owner started %s s after sbatch (notice %s s)\n' "$i" "$t" "$(rc_sub "$RC_T_NOTICE" "$RC_T_SUBMIT")"
	it_cleanup_jobs || exit 1
done
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { printf "%.3f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
mi=$(median "${idle[@]}") mn=$(median "${native[@]}")
echo "median owner start: idletime $mi s, native $mn s"
awk -v a="$mn" -v b="$mi" 'BEGIN { printf "ratio native/idletime: %.1fx (idletime waits %.1f%% of native)\n", a / b, 100 * b / a }'
