#!/bin/bash
# bench/reclaim/many.sh: N guaranteed (owner) jobs submitted at once reclaim GPUs lent to
# idle-time jobs (issue 14). Pool a100-east (a100-[1-2], 8 GPUs) is filled with 8 one-GPU
# idle-time jobs of carol; then N one-GPU owner jobs of alice (quota team-a) and bob (team-b)
# are submitted together. Same cluster, same run, same GraceTime, for each N:
#   idletime: the victims save SAVE_MB MiB on the notice and call release();
#   native:   the victims ignore the notice (Slurm alone: GraceTime pass, SIGTERM, KillWait).
# Prints per N: the slowest owner's start after its own sbatch, the slowest victim's save, how
# many victims were preempted (and any preempted twice), and the ratio native/idletime.
# Usage: many.sh [N...]   (default 1 4 8; at most 8 = both quotas of a100-east)
# Env: IDLETIME_CLUSTER_DIR / IDLETIME_CLUSTER_PORT_BASE, IDLETIME_PREFIX, SAVE_MB (default 64),
# MODES (default "idletime native").
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck disable=SC2034 # read by lib.sh
IT_NAME=bench-reclaim-many
# shellcheck source=../../testsuite/cluster/lib.sh
. "$here/../../testsuite/cluster/lib.sh"
# shellcheck source=lib.sh
. "$here/lib.sh"
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1 4 8)
for n in "${sizes[@]}"; do
	[[ $n =~ ^[1-8]$ ]] || { echo "bench/reclaim/many: N must be 1-8 (two 4-GPU quotas on a100-east), not '$n'" >&2; exit 2; }
done
save_mb=${SAVE_MB:-64}
it_begin
rc_env || exit 1

# one_round N MODE: prints "max_latency slowest_save victims twice".
one_round() {
	local n=$1 mode=$2 i v o user quota lat max=0 save=0 s victims=0 twice=0 c
	local -a vic=() own=() tsub=()
	for i in 1 2 3 4 5 6 7 8; do
		v=$(it_submit carol -J many-v --open-mode=append --idle-resources=only -w "a100-$(((i + 3) / 4))" --gres=gpu:a100:1 \
			"$RC_JOBS/probe-exec.sh" --on-notice "$mode" --save-mb "$save_mb") || return 1
		vic+=("$v")
	done
	for v in "${vic[@]}"; do
		it_wait_state "$v" RUNNING 120 || { echo "victim $v never ran" >&2; return 1; }
		rc_wait_line "$(rc_out many-v "$v")" '^ready ' 60 || return 1
	done
	for i in $(seq "$n"); do
		if [ $((i % 2)) = 1 ]; then user=alice quota=team-a; else user=bob quota=team-b; fi
		tsub+=("$(rc_now)")
		o=$(it_submit "$user" -J many-o --quota="$quota" --gres=gpu:a100:1 "$RC_JOBS/owner.sh" 600) || return 1
		own+=("$o")
	done
	for i in "${!own[@]}"; do
		rc_wait_line "$(rc_out many-o "${own[$i]}")" '^started ' 300 || return 1
		lat=$(rc_sub "$(rc_word "$(rc_out many-o "${own[$i]}")" started)" "${tsub[$i]}")
		rc_le "$lat" "$max" || max=$lat
	done
	for v in "${vic[@]}"; do
		c=$(grep -c '^notice' "$(rc_out many-v "$v")")
		[ "$c" -ge 1 ] && victims=$((victims + 1))
		[ "$c" -ge 2 ] && twice=$((twice + 1))
		s=$(rc_kv "$(rc_out many-v "$v")" saved seconds)
		[ -z "$s" ] || rc_le "$s" "$save" || save=$s
	done
	it_cleanup_jobs >/dev/null 2>&1
	echo "$max $save $victims $twice"
}

echo "bench/reclaim/many: GraceTime=$(it_partition_field idle-a100-east GraceTime), victims save $save_mb MiB"
for n in "${sizes[@]}"; do
	read -r mi si vi ti < <(one_round "$n" release) || { echo "idletime round N=$n failed" >&2; exit 1; }
	[ -n "$mi" ] || { echo "idletime round N=$n failed" >&2; exit 1; }
	printf 'N=%d idletime: all owners running %s s after their sbatch (slowest save %s s, +%s s); victims %d, preempted twice %d\n' \
		"$n" "$mi" "$si" "$(rc_sub "$mi" "$si")" "$vi" "$ti"
	[[ ${MODES:-idletime native} == *native* ]] || continue
	read -r mn _ vn tn < <(one_round "$n" ignore) || { echo "native round N=$n failed" >&2; exit 1; }
	[ -n "$mn" ] || { echo "native round N=$n failed" >&2; exit 1; }
	printf 'N=%d native:   all owners running %s s after their sbatch; victims %d, preempted twice %d\n' "$n" "$mn" "$vn" "$tn"
	awk -v a="$mn" -v b="$mi" -v n="$n" 'BEGIN { printf "N=%d ratio native/idletime: %.1fx\n", n, a / b }'
done
