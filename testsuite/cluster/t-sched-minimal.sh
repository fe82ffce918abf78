#!/bin/bash
# cluster-args: --config testsuite/sched/data/sched16.json --extra-conf testsuite/sched/data/sched-slurm.conf
# preempt/idletime, no over-preemption: idle-time jobs of 1, 2, 4 and 8 GPUs on one 16-GPU node
# (1 GPU free); a guaranteed job needing 4 GPUs preempts no more GPUs than it needs (here 3:
# the 1- and 2-GPU jobs, least work lost first), and starts.
# Needs the cluster started with testsuite/sched/data/sched16.json and PreemptType=preempt/idletime.
# SCHED_T_ORDER: submission order of the GPU sizes (default "1 2 4 8").
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# Checked before it_begin (which cancels every job): the sched cluster, IDLETIME_CONFIG=testsuite/sched/data/sched16.json and start.sh
# --config testsuite/sched/data/sched16.json --extra-conf testsuite/sched/data/sched-slurm.conf
scontrol show config | grep -q '^PreemptType *= *preempt/idletime' && scontrol show partition idle-p16 >/dev/null 2>&1 ||
	it_fail "needs the sched cluster (sched16.json + sched-slurm.conf, see testsuite/sched/README)"
it_begin
SLEEP=$IT_JOBS_DIR/sleep.sh
declare -A GPUS
for g in ${SCHED_T_ORDER:-1 2 4 8}; do
	id=$(it_submit bob -J "idle$g" --idle-resources=only --quota=team-b --gres=gpu:"$g" -c 1 "$SLEEP" 3600) ||
		it_fail "sbatch of the $g-GPU idle-time job"
	GPUS[$id]=$g
done
for id in "${!GPUS[@]}"; do it_wait_state "$id" RUNNING 60 || it_fail "idle-time job $id did not start"; done
sleep 2 # every job has run a little: work lost is GPUs x seconds
owner=$(it_submit carol -J owner --quota=team-c --idle-resources=none --gres=gpu:4 -c 1 "$SLEEP" 600) ||
	it_fail "sbatch of the guaranteed job"
it_wait_state "$owner" RUNNING 60 || it_fail "guaranteed job $owner did not start: $(it_job_field "$owner" Reason)"
preempted=0 victims=
for id in "${!GPUS[@]}"; do
	if [ "$(it_job_field "$id" Restarts)" != 0 ]; then
		preempted=$((preempted + GPUS[$id]))
		victims="$victims ${GPUS[$id]}-GPU($id)"
	fi
done
[ "$preempted" -le 4 ] || it_fail "preempted $preempted GPUs ($victims) for a 4-GPU job"
[ "$preempted" -ge 3 ] || it_fail "preempted only $preempted GPUs ($victims) but the owner runs?"
it_info "4-GPU owner $owner started; preempted $preempted GPUs:$victims"
it_pass
