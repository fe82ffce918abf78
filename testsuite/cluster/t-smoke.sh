#!/bin/bash
# Smoke test of the local cluster with plain sbatch -p (no idletime submission plugins):
#  (a) every configured node is idle with its GPUs;
#  (b) a guaranteed job beyond its quota's GPU limit pends with Reason=QOSGrpGRES;
#  (c) an idle-partition job is preempted and requeued by a quota job on the same nodes.
# Users: alice (account team-a, quota partition) and bob (idle partition of the same pool).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
it_begin
SLEEP=$IT_JOBS_DIR/sleep.sh

# ---- (a) nodes idle with their GPUs, as rendered from the config
nodes=$(grep '^NodeName=' "$IC_ETC/render/nodes") || it_fail "no rendered nodes in $IC_ETC/render/nodes"
while read -r line; do
	n=${line%% *}
	n=${n#NodeName=}
	want=$(tr ' ' '\n' <<<"$line" | sed -n 's/^Gres=//p')
	info=$(scontrol show node -o "$n" 2>/dev/null) || it_fail "node $n unknown to slurmctld"
	state=$(tr ' ' '\n' <<<"$info" | sed -n 's/^State=//p')
	gres=$(tr ' ' '\n' <<<"$info" | sed -n 's/^Gres=//p')
	# PLANNED is a leftover backfill reservation flag, harmless on an idle node.
	[ "$state" = IDLE ] || [ "$state" = IDLE+PLANNED ] || it_fail "state of node $n: expected IDLE, got $state"
	it_assert_eq "${want:-(null)}" "$gres" "Gres of node $n"
done <<<"$nodes"
it_info "(a) $(wc -l <<<"$nodes") nodes idle with their Gres"

# ---- (b) quota full -> QOSGrpGRES
qpart=$(it_partition_of_account team-a)
[ -n "$qpart" ] || it_fail "no quota partition allows account team-a"
qos=$(it_partition_field "$qpart" QoS)
limit=$(it_qos_gpu_limit "$qos")
[[ $limit =~ ^[1-9][0-9]*$ ]] || it_fail "QOS $qos of $qpart has no GrpTRES gres/gpu limit"
full=$(it_submit alice -p "$qpart" -J smoke-full --gres=gpu:"$limit" "$SLEEP" 600) || it_fail "sbatch of the quota-filling job"
it_wait_state "$full" RUNNING 30 || it_fail "job $full (gpu:$limit in $qpart) did not start"
over=$(it_submit alice -p "$qpart" -J smoke-over --gres=gpu:1 "$SLEEP" 600) || it_fail "sbatch of the over-quota job"
it_wait_reason "$over" QOSGrpGRES 30 || it_fail "over-quota job $over: Reason=$(it_job_field "$over" Reason)"
it_assert_eq PENDING "$(it_job_field "$over" JobState)" "state of over-quota job $over"
it_info "(b) job $over pends with QOSGrpGRES behind $full (QOS $qos, gres/gpu=$limit)"
it_cleanup_jobs || it_fail "jobs of (b) did not end"

# ---- (c) idle job preempted and requeued by a quota job of the same nodes
qnodes=$(it_partition_field "$qpart" Nodes)
ipart=$(it_idle_partition_of "$qnodes")
[ -n "$ipart" ] || it_fail "no idle-* partition over $qnodes"
nnodes=$(sinfo -h -N -p "$qpart" -o %N | sort -u | wc -l)
pergpu=$(scontrol show node -o "$(sinfo -h -N -p "$qpart" -o %N | head -n1)" | tr ' ' '\n' | sed -n 's/^Gres=gpu:\([^:]*:\)\{0,1\}\([0-9]*\).*/\2/p')
idle=$(it_submit bob -p "$ipart" -J smoke-idle -N "$nnodes" --gres=gpu:"$pergpu" --requeue "$SLEEP" 900) ||
	it_fail "sbatch of the idle job"
it_wait_state "$idle" RUNNING 30 || it_fail "idle job $idle did not start in $ipart"
t0=$(date +%s)
guar=$(it_submit alice -p "$qpart" -J smoke-guaranteed --gres=gpu:1 "$SLEEP" 600) || it_fail "sbatch of the quota job"
# GraceTime is acted on by a 30 s periodic pass, then KillWait: allow up to 150 s.
it_wait_state "$guar" RUNNING 150 || it_fail "quota job $guar did not start; idle job $idle is $(it_job_field "$idle" JobState)"
it_wait_state "$idle" PENDING 60 || it_fail "preempted job $idle was not requeued"
it_assert_eq 1 "$(it_job_field "$idle" Restarts)" "Restarts of preempted job $idle"
it_info "(c) job $guar in $qpart started $(($(date +%s) - t0)) s after submission; job $idle requeued (Restarts=1, PENDING, Reason=$(it_job_field "$idle" Reason))"
it_pass
