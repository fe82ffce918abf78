#!/bin/bash
# bench/launch: what idletime's plugins add to a job's start on free GPUs. One cluster, one run:
# ROUNDS guaranteed one-GPU jobs with idletime's plugins (job_submit, SPANK in sbatch and
# slurmstepd, EpilogSlurmctld hook), then ROUNDS with --no-plugins (same partitions, accounts and
# sbatch arguments); the cluster is restarted with the plugins at the end. Each job runs alone on
# an idle cluster and prints its own start time. Two latencies per round: from just before sbatch
# (includes runuser and Slurm's wait for its once-a-second scheduling pass, 0-1 s) and from the
# job's allocation in slurmctld's log ("sched: Allocate", ms resolution: the launch alone). Prints
# every round, the medians and the ratios plugins/plain.
# Usage: run.sh [ROUNDS]   (default 10; about 2 s a round plus three cluster (re)starts)
# Env: IDLETIME_CLUSTER_DIR / IDLETIME_CLUSTER_PORT_BASE (which cluster), PREFIX (installed
# idletime, default /usr/local). Cancels every job on that cluster first (it_begin).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
IT_NAME=bench-launch
# shellcheck source=../../testsuite/cluster/lib.sh
. "$here/../../testsuite/cluster/lib.sh"
rounds=${1:-10}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "bench/launch: ROUNDS must be a positive number, not '$rounds'" >&2; exit 2; }
start=$IC_SRC/start.sh

now() { date +%s.%N; }
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}'; }

# alloc_time ID: epoch seconds of "sched: Allocate JobId=ID" in slurmctld's log, empty if none.
alloc_time() {
	local ts
	ts=$(grep -F "sched: Allocate JobId=$1 " "$IC_LOGD/slurmctld.log" | tail -n1 | cut -c2-24) || return 0
	[ -n "$ts" ] && date -d "${ts/T/ }" +%s.%N
}

# rounds_of LABEL: ROUNDS jobs one after the other; prints per round
# "LABEL round N: start S s after sbatch began, L s after its allocation (sbatch took B s)".
rounds_of() {
	local label=$1 i t0 t1 id out ts ta
	for i in $(seq "$rounds"); do
		t0=$(now)
		id=$(it_submit alice -J "launch-$label" -p quota-team-a -A team-a --gres=gpu:a100:1 -t 1 \
			--wrap='date +%s.%N') || return 1
		t1=$(now)
		out=$IC_DIR/out/launch-$label-$id.out
		it_wait_state "$id" "COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL" 60 || { echo "bench/launch: job $id did not end" >&2; return 1; }
		[ "$(it_job_field "$id" JobState)" = COMPLETED ] || { echo "bench/launch: job $id did not complete" >&2; return 1; }
		ic_poll 10 test -s "$out" || { echo "bench/launch: job $id wrote no start time" >&2; return 1; }
		ts=$(head -n1 "$out")
		[[ $ts =~ ^[0-9]+\.[0-9]+$ ]] || { echo "bench/launch: job $id printed '$ts', not a time" >&2; return 1; }
		ta=$(alloc_time "$id")
		[ -n "$ta" ] || { echo "bench/launch: no 'sched: Allocate JobId=$id' in slurmctld's log" >&2; return 1; }
		awk -v l="$label" -v i="$i" -v a="$t0" -v b="$t1" -v s="$ts" -v c="$ta" \
			'BEGIN { printf "%s round %d: start %.3f s after sbatch began, %.3f s after its allocation (sbatch took %.3f s)\n", l, i, s - a, s - c, b - a }'
	done
}

restart() {
	"$start" "$@" >"$IC_DIR/bench-launch.start" 2>&1 || { echo "bench/launch: start.sh $* failed:" >&2; cat "$IC_DIR/bench-launch.start" >&2; exit 1; }
}

restart
it_begin
trap 'it_cleanup_jobs; restart' EXIT
res=$IC_DIR/bench-launch.rounds
: >"$res"
rounds_of plugins | tee -a "$res" || exit 1
restart --no-plugins
rounds_of plain | tee -a "$res" || exit 1
med() { awk -v l="$1" -v f="$2" '$1 == l {print $f}' "$res" | median; }
awk -v p="$(med plugins 5)" -v n="$(med plain 5)" -v pa="$(med plugins 10)" -v na="$(med plain 10)" -v r="$rounds" 'BEGIN {
	printf "bench/launch: %d rounds each; median start after sbatch: plugins %.3f s, plain %.3f s, ratio plugins/plain %.2f\n", r, p, n, p / n
	printf "bench/launch: median start after allocation: plugins %.3f s, plain %.3f s, ratio plugins/plain %.2f\n", pa, na, pa / na }'
