#!/bin/bash
# cluster-args: --config testsuite/sched/data/sched16.json --extra-conf testsuite/sched/data/sched-slurm.conf
# preempt/idletime, victim order: three idle-time jobs (4 GPUs each, filling a 12-GPU node) whose
# last checkpoints are 50 s, 3 s and 20 s old (published in their Comment by their owner);
# a guaranteed job needing 4 GPUs preempts exactly the one with the freshest checkpoint.
# The jobs must run longer than the oldest claim (a claim older than the job's start is invalid).
# SCHED_T_AGES="20 3 10" (ages of job 1, 2, 3 in seconds, each at most 60) changes them.
# Needs the cluster started with testsuite/sched/data/sched16.json and PreemptType=preempt/idletime.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# Checked before it_begin (which cancels every job): the sched cluster, IDLETIME_CONFIG=testsuite/sched/data/sched16.json and start.sh
# --config testsuite/sched/data/sched16.json --extra-conf testsuite/sched/data/sched-slurm.conf
scontrol show config | grep -q '^PreemptType *= *preempt/idletime' && scontrol show partition idle-p16 >/dev/null 2>&1 ||
	it_fail "needs the sched cluster (sched16.json + sched-slurm.conf, see testsuite/sched/README)"
it_begin
SLEEP=$IT_JOBS_DIR/sleep.sh
# Ages stay within 60 s: job_submit/idletime records a claim more than 60 s old when written as
# written now (doc/design/scheduling-plugins.md, "Checkpoint channel").
read -r -a AGES <<<"${SCHED_T_AGES:-50 3 20}"   # job 1, 2, 3: the freshest is the middle one

ids=()
for i in 0 1 2; do
	id=$(it_submit alice -J "victim$i" --idle-resources=only --quota=team-a --gres=gpu:4 -c 1 "$SLEEP" 7200) ||
		it_fail "sbatch of idle-time job $i"
	ids+=("$id")
done
for id in "${ids[@]}"; do it_wait_state "$id" RUNNING 60 || it_fail "idle-time job $id did not start"; done
for id in "${ids[@]}"; do it_assert_eq idle-p12 "$(it_job_field "$id" Partition)" "partition of $id"; done

max=0
for a in "${AGES[@]}"; do [ "$a" -le "$max" ] || max=$a; done
start=$(date -d "$(it_job_field "${ids[2]}" StartTime)" +%s)
it_info "jobs ${ids[*]} running; waiting until they ran $((max + 5)) s (oldest claim ${max} s)"
while [ $(($(date +%s) - start)) -lt $((max + 5)) ]; do
	for id in "${ids[@]}"; do it_assert_eq RUNNING "$(it_job_field "$id" JobState)" "state of $id while waiting"; done
	sleep 5
done

# Another user may not write the channel; the owner may (Slurm checks the munge-authenticated uid).
now=$(date +%s)
if runuser -u bob -- env SLURM_CONF="$SLURM_CONF" scontrol update jobid="${ids[0]}" comment="idletime:ckpt=$now" 2>/dev/null; then
	it_fail "bob could set the Comment of alice's job ${ids[0]}"
fi
for i in 0 1 2; do
	runuser -u alice -- env SLURM_CONF="$SLURM_CONF" scontrol update jobid="${ids[$i]}" \
		comment="note-$i idletime:ckpt=$((now - AGES[i]))" || it_fail "alice could not set the Comment of ${ids[$i]}"
done
best=0
for i in 1 2; do [ "${AGES[$i]}" -lt "${AGES[$best]}" ] && best=$i; done
fresh=${ids[$best]}

owner=$(it_submit alice -J owner --quota=team-a --idle-resources=none --gres=gpu:4 -c 1 "$SLEEP" 600) ||
	it_fail "sbatch of the guaranteed job"
it_wait_state "$owner" RUNNING 60 || it_fail "guaranteed job $owner did not start"
it_assert_eq quota-team-a "$(it_job_field "$owner" Partition)" "partition of the guaranteed job"
for id in "${ids[@]}"; do
	r=$(it_job_field "$id" Restarts)
	if [ "$id" = "$fresh" ]; then
		it_assert_eq 1 "$r" "restarts of the freshest job $id (the one to preempt)"
	else
		it_assert_eq 0 "$r" "restarts of job $id (older checkpoint, must keep running)"
		it_assert_eq RUNNING "$(it_job_field "$id" JobState)" "state of job $id"
	fi
done
grep -q "preempted JobId=$fresh has been requeued" "$IC_LOGD/slurmctld.log" ||
	it_fail "slurmctld.log has no requeue line for $fresh"
# preempt/idletime logs its time per preemptable() call once the calls pause for 5 s.
stats_line() { grep -o 'idletime/preempt: preemptable() calls=[1-9][0-9]* mean_us=[0-9.]* max_us=[0-9.]* over [0-9]* s' "$IC_LOGD/slurmctld.log" | tail -n1 | grep .; }
ic_poll 20 stats_line >/dev/null || it_fail "slurmctld.log has no preempt/idletime time-per-call line 20 s after the preemption"
it_info "ages ${AGES[*]} s -> preempted $fresh only; owner $owner started in quota-team-a; $(stats_line)"
it_pass
