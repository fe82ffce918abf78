#!/bin/bash
# bench/launch: what idletime's plugins add to a job's start on free GPUs. One cluster, one run:
# ROUNDS guaranteed one-GPU jobs with idletime's plugins (job_submit, SPANK in sbatch and
# slurmstepd, EpilogSlurmctld hook), then ROUNDS with --no-plugins (same partitions, accounts and
# sbatch arguments), then the plugins again. Each job runs alone on an idle cluster and prints its
# own start time; latency = that start - the time just before sbatch. Prints every round, the
# medians and the ratio plugins/plain.
# Usage: run.sh [ROUNDS]   (default 10; about 2 s a round plus three cluster (re)starts)
# Env: IDLETIME_CLUSTER_DIR / IDLETIME_CLUSTER_PORT_BASE (which cluster), PREFIX (installed
# idletime, default /usr/local). Leaves the cluster as start.sh without options makes it.
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

# rounds_of LABEL: ROUNDS jobs one after the other; prints "LABEL latency sbatch_s" per round.
rounds_of() {
	local label=$1 i t0 t1 id out ts
	for i in $(seq "$rounds"); do
		t0=$(now)
		id=$(it_submit alice -J "launch-$label" -p quota-team-a -A team-a --gres=gpu:a100:1 -t 1 \
			--wrap='date +%s.%N') || return 1
		t1=$(now)
		out=$IC_DIR/out/launch-$label-$id.out
		it_wait_state "$id" "COMPLETED|FAILED|CANCELLED" 60 || { echo "bench/launch: job $id did not end" >&2; return 1; }
		ic_poll 10 test -s "$out" || { echo "bench/launch: job $id wrote no start time" >&2; return 1; }
		ts=$(head -n1 "$out")
		awk -v l="$label" -v i="$i" -v a="$t0" -v b="$t1" -v s="$ts" \
			'BEGIN { printf "%s round %d: start %.3f s after sbatch began (sbatch took %.3f s)\n", l, i, s - a, b - a }'
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
p=$(awk '$1 == "plugins" {print $5}' "$res" | median)
n=$(awk '$1 == "plain" {print $5}' "$res" | median)
awk -v p="$p" -v n="$n" -v r="$rounds" 'BEGIN {
	printf "bench/launch: %d rounds each; median start after sbatch: plugins %.3f s, plain %.3f s; ratio plugins/plain %.2f (difference %+.3f s)\n", r, p, n, p / n, p - n }'
