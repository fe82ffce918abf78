#!/bin/bash
# bench/reclaim/mass-end.sh: a mass end on the cluster of scale.sh (issue 14 goal 3; security.md
# R1): every GPU of idle-a100-big runs a one-GPU idle-time job (scale.sh's fill, VICTIM=replay-job),
# then all are cancelled at once. Every ended job gets an idletime-ft-hook that polls slurmctld
# until its job has left COMPLETING. Run twice in the same invocation: with the cluster's own
# hook, then with the hook BASE_HOOK (a build from before the change measured). Prints
# per run the seconds until slurmctld listed none of the jobs, until the last hook of the cluster
# exited, the job loads slurmctld served (sdiag REQUEST_JOB_INFO_SINGLE: count, mean time), the
# RPCs of the hooks, the nodes Slurm drained under the load, and the ratios baseline / current.
# Usage: BASE_HOOK=/path/to/idletime-ft-hook mass-end.sh
# Env: as scale.sh (IDLETIME_CLUSTER_DIR, IDLETIME_CLUSTER_PORT_BASE, IDLETIME_PREFIX). The
# cluster's hook wrapper (IC_BIN/idletime-ft-hook-wrapper) is pointed at BASE_HOOK for the second
# run and restored on exit. Takes 10-20 minutes with 2,048 GPUs.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck disable=SC2034 # read by lib.sh
IT_NAME=bench-reclaim-mass-end
# shellcheck source=../../testsuite/cluster/lib.sh
. "$here/../../testsuite/cluster/lib.sh"
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=scale-lib.sh
. "$here/scale-lib.sh"
# shellcheck disable=SC2034 # read by scale-lib.sh
VICTIM=replay-job
[ -x "${BASE_HOOK:-}" ] || { echo "bench/reclaim/mass-end: BASE_HOOK must name an idletime-ft-hook binary to compare with, not '${BASE_HOOK:-}'" >&2; exit 2; }
it_begin
rc_env || exit 1
nodes=$(sinfo -h -N -p idle-a100-big -o '%N %G' 2>/dev/null | sort -u)  # one line per node, any state
SC_GPUS=$(awk '{g = $2; sub(/\(.*/, "", g); n = split(g, f, ":"); s += f[n]} END {print s + 0}' <<<"$nodes")
[ "$(grep -c . <<<"$nodes")" = 64 ] || { echo "bench/reclaim/mass-end: needs the cluster of bench/reclaim/scale64x32.json or scale64.json; idle-a100-big has $(grep -c . <<<"$nodes") nodes" >&2; exit 2; }
wrapper=$IC_BIN/idletime-ft-hook-wrapper
[ -f "$wrapper" ] || { echo "bench/reclaim/mass-end: $wrapper missing: the cluster runs no ft-hook" >&2; exit 2; }
[ ! -e "$wrapper.orig" ] || { echo "bench/reclaim/mass-end: $wrapper.orig exists (an earlier run was killed): check which hook it runs, move it back to $wrapper, then rerun" >&2; exit 2; }
cp "$wrapper" "$wrapper.orig" || exit 1
trap 'mv -f "$wrapper.orig" "$wrapper"' EXIT
own_hook=$(awk '$1 == "exec" {print $2}' "$wrapper.orig")
hooks_alive() { pgrep -f -- "--log $IC_LOGD/ft-hook.log" | wc -l; }  # either binary
# hooks_quiet: waits up to 600 s until no hook of this cluster runs.
hooks_quiet() {
	local n
	for ((n = 0; n < 600; n++)); do [ "$(hooks_alive)" = 0 ] && return 0; sleep 1; done
	echo "mass-end: hooks of earlier job ends still running after 600 s" >&2
	return 1
}

# me_run LABEL HOOK: fill, cancel everything at once, measure. Sets ME_GONE ME_HOOKS ME_LOADS.
me_run() {
	local label=$1 hook=$2 t0 t_gone="" t_last n i drained
	awk -v h="$hook" '$1 == "exec" {$2 = h} {print}' "$wrapper.orig" >"$wrapper.new" && chmod 755 "$wrapper.new" &&
		mv -f "$wrapper.new" "$wrapper" || return 1
	it_cleanup_jobs >/dev/null 2>&1
	hooks_quiet || return 1
	sc_undrain
	rm -f "$IC_DIR"/out/scale-*.out
	sc_fill release 0 || return 1
	hooks_quiet || return 1
	sdiag -r >/dev/null 2>&1
	t0=$(rc_now)
	# One RPC per array (scancel -n sends one per task, throttled: minutes for 2,048 tasks).
	# shellcheck disable=SC2046 # array job ids
	scancel $(squeue -h -r -n scale-v -o %F | sort -u) || return 1
	ME_DRAINED=0
	for ((i = 1; ; i++)); do
		# Nodes Slurm drained under the load ("Kill task failed", "batch job complete failure")
		# keep their jobs COMPLETING: counted, then resumed.
		if ((i % 20 == 0)); then
			drained=$(sinfo -h -p idle-a100-big -R -o '%E|%N' 2>/dev/null | awk -F'|' '$1 ~ /^(Kill task failed|batch job complete f)/ {print $2}' | paste -sd,)
			if [ -n "$drained" ]; then
				ME_DRAINED=$((ME_DRAINED + $(scontrol show hostnames "$drained" | wc -l)))
				scontrol update NodeName="$drained" State=RESUME 2>/dev/null
			fi
		fi
		n=$(squeue -h -r -n scale-v 2>/dev/null | wc -l)
		[ -n "$t_gone" ] || [ "$n" != 0 ] || t_gone=$(rc_now)
		[ -z "$t_gone" ] || [ "$(hooks_alive)" != 0 ] || break
		[ "$(rc_sub "$(rc_now)" "$t0" | cut -d. -f1)" -lt 1800 ] || { echo "mass-end: not done after 1800 s" >&2; return 1; }
		sleep 1
	done
	t_last=$(rc_now)
	ME_GONE=$(rc_sub "$t_gone" "$t0") ME_HOOKS=$(rc_sub "$t_last" "$t0")
	for ((n = 0; n < 30; n++)); do  # sdiag's counts stay until the next reset; slurmctld may still be busy
		ME_LOADS=$(sdiag 2>/dev/null | awk '$1 == "REQUEST_JOB_INFO_SINGLE" {c = $0; sub(/.*count:/, "", c); sub(/ .*/, "", c); print c}')
		[ -z "$ME_LOADS" ] || break
		sleep 2
	done
	echo "$label ($hook): $SC_GPUS jobs cancelled at once; none listed by slurmctld after $ME_GONE s, last hook exited after $ME_HOOKS s; job loads served ${ME_LOADS:-0}; nodes drained by Slurm meanwhile $ME_DRAINED"
	echo "$label: RPCs: $(sc_rpcs)"
}

echo "bench/reclaim/mass-end: 64 nodes, $SC_GPUS GPUs; baseline hook $BASE_HOOK, current hook $own_hook"
# The current hook first: a baseline teardown can leave slurmctld and the nodes busy for minutes.
me_run current "$own_hook" || exit 1
c_hooks=$ME_HOOKS c_loads=${ME_LOADS:-0}
me_run baseline "$BASE_HOOK" || exit 1
awk -v bh="$ME_HOOKS" -v ch="$c_hooks" -v bl="${ME_LOADS:-0}" -v cl="$c_loads" 'BEGIN {
	if (ch > 0) printf "ratio baseline/current, time until the last hook exited: %.2fx\n", bh / ch
	if (cl > 0) printf "ratio baseline/current, job loads served: %.2fx\n", bl / cl }'
it_cleanup_jobs >/dev/null 2>&1
exit 0
