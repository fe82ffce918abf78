#!/bin/bash
# `only` jobs borrow idle capacity beyond their quota's size, across every a100 pool of the tenant,
# and are preempted and requeued when the owning quota submits guaranteed work; the owner's job
# then starts. alice (quota team-a: 4 GPUs of a100-east) fills all 16 a100 GPUs with idle-time jobs;
# bob (quota team-b of a100-east) then submits a guaranteed 4-GPU job.
# The idle-time jobs trap the checkpoint notice (SIGUSR1 to the batch shell) and keep running, as a
# job without checkpoints does: an untrapped USR1 would end the job (FAILED, not requeued, 22.05).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
it_begin
grep -q '^JobSubmitPlugins=idletime' "$IC_CONF" || it_fail "cluster runs without job_submit/idletime"
SLEEP=$IT_JOBS_DIR/sleep.sh
OUT=$IC_DIR/out
NOTICED='trap "echo NOTICE" USR1; for _ in $(seq 900); do sleep 1; done'

ids=()
for i in 1 2 3 4; do
	ids+=("$(it_submit alice -J only-$i --idle-resources=only --gres=gpu:a100:4 -N1 -o "$OUT/only-%j.out" \
		--open-mode=append --wrap="$NOTICED")") || it_fail "sbatch only-$i"
done
for id in "${ids[@]}"; do
	it_wait_state "$id" RUNNING 40 || it_fail "only job $id did not start (Reason=$(it_job_field "$id" Reason))"
	p=$(it_job_field "$id" Partition)
	[[ $p == idle-a100-* ]] || it_fail "only job $id runs in $p, not an a100 idle partition"
	it_assert_eq 1 "$(it_job_field "$id" Requeue)" "Requeue of $id"
done
nodes=$(for id in "${ids[@]}"; do it_job_field "$id" NodeList; done | sort | tr '\n' ' ')
it_assert_eq "a100-1 a100-2 a100-3 a100-4 " "$nodes" "nodes of alice's idle-time jobs"
it_info "alice runs 16 GPUs (quota 4) as idle-time jobs ${ids[*]} on $nodes"

t0=$(date +%s%N)
owner=$(it_submit bob -J owner --quota=team-b --gres=gpu:a100:4 "$SLEEP" 600) || it_fail "sbatch of bob's guaranteed job"
it_assert_eq quota-team-b "$(it_job_field "$owner" Partition)" "partition of the guaranteed job"
# GraceTime 30 is acted on by a 30 s pass, then KillWait 30: allow 150 s.
it_wait_state "$owner" RUNNING 150 || it_fail "guaranteed job $owner did not start (Reason=$(it_job_field "$owner" Reason))"
ms=$((($(date +%s%N) - t0) / 1000000))
victim=
for id in "${ids[@]}"; do
	[ "$(it_job_field "$id" Restarts)" = 1 ] && victim=$id
done
[ -n "$victim" ] || it_fail "no idle-time job was requeued"
it_wait_state "$victim" PENDING 60 || it_fail "preempted job $victim is $(it_job_field "$victim" JobState), not requeued"
# Accounting is asynchronous and, without -D, sacct shows only the newest record of a requeued job.
ic_poll 30 sh -c "sacct -n -X -D -j '$victim' -o State -P | grep -q PREEMPTED" ||
	it_fail "sacct has no PREEMPTED record for $victim: $(sacct -n -X -D -j "$victim" -o State -P | tr '\n' ' ')"
grep -qx NOTICE "$OUT/only-$victim.out" || it_fail "victim $victim got no checkpoint notice (SIGUSR1)"
it_assert_eq RUNNING "$(it_job_field "$owner" JobState)" "state of the guaranteed job"
it_info "bob's job $owner started after $ms ms; alice's job $victim got the notice, was preempted (sacct PREEMPTED), requeued: Restarts=1 PENDING"
it_pass
