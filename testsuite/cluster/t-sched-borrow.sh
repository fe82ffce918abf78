#!/bin/bash
# cluster-args: --config testsuite/sched/data/sched16.json --extra-conf testsuite/sched/data/sched-slurm.conf
# site_factor/idletime, fair borrowing: team-b borrows 2 GPUs, team-c 6 GPUs of a full 16-GPU
# node; both have a pending idle-time job (team-c's is older). When 2 GPUs free up, team-b's job
# (the quota borrowing less) starts first; team-c's keeps pending.
# Needs the cluster started with testsuite/sched/data/sched16.json, PriorityType=priority/multifactor
# and PrioritySiteFactorPlugin=site_factor/idletime.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# Checked before it_begin (which cancels every job): the sched cluster, IDLETIME_CONFIG=testsuite/sched/data/sched16.json and start.sh
# --config testsuite/sched/data/sched16.json --extra-conf testsuite/sched/data/sched-slurm.conf
scontrol show config | grep -q '^PreemptType *= *preempt/idletime' && scontrol show partition idle-p16 >/dev/null 2>&1 ||
	it_fail "needs the sched cluster (sched16.json + sched-slurm.conf, see testsuite/sched/README)"
it_begin
SLEEP=$IT_JOBS_DIR/sleep.sh
run() { # USER ARGS...: submit and wait until it runs
	local u=$1 id
	shift
	id=$(it_submit "$u" "$@" -c 1 "$SLEEP" 3600) || it_fail "sbatch as $u $*"
	it_wait_state "$id" RUNNING 60 || it_fail "job $id ($u $*) did not start"
	echo "$id"
}
blockers=()
for i in 1 2 3 4; do blockers+=("$(run bob -J "guar$i" --quota=team-b --idle-resources=none --gres=gpu:2)"); done
run bob -J borrow-b --idle-resources=only --quota=team-b --gres=gpu:2 >/dev/null
for i in 1 2 3; do run carol -J "borrow-c$i" --idle-resources=only --quota=team-c --gres=gpu:2 >/dev/null; done

old=$(it_submit carol -J wait-c --idle-resources=only --quota=team-c --gres=gpu:2 -c 1 "$SLEEP" 600) || it_fail "sbatch wait-c"
sleep 2
new=$(it_submit bob -J wait-b --idle-resources=only --quota=team-b --gres=gpu:2 -c 1 "$SLEEP" 600) || it_fail "sbatch wait-b"
it_wait_reason "$old" 'Resources|Priority' 30 || it_fail "job $old is not waiting for resources"
it_wait_reason "$new" 'Resources|Priority' 30 || it_fail "job $new is not waiting for resources"
pold=$(squeue -h -j "$old" -o %Q) pnew=$(squeue -h -j "$new" -o %Q)
[ "$pnew" -gt "$pold" ] || it_fail "priority of team-b's job $new ($pnew) not above team-c's $old ($pold)"

scancel "${blockers[0]}"
it_wait_state "$new" RUNNING 60 || it_fail "team-b's job $new did not start when 2 GPUs freed up"
sleep 3
it_assert_eq PENDING "$(it_job_field "$old" JobState)" "state of team-c's older job $old"
it_info "priorities: team-b (borrows 2/8) $pnew > team-c (borrows 6/8, older) $pold; $new started first"
it_pass
