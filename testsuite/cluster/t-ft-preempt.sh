#!/bin/bash
# Preemptions never use the failure budget: alice's idle-time job with --max-restarts=1 is
# preempted 5 times by bob's guaranteed job; each time it saves on the notice and requeues itself
# (checkpoint library release(), i.e. slurm_requeue of its own job). idletime-ft-hook must count
# each run as a preemption (AdminComment "p":n,"f":0), and the job must complete after the 5th.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=ft-lib.sh
. "$IC_SRC/ft-lib.sh"
# shellcheck source=../../bench/reclaim/lib.sh
. "$IC_SRC/../../bench/reclaim/lib.sh"
it_begin
ft_require_hook
grep -q '^JobSubmitPlugins=idletime' "$IC_CONF" || it_fail "cluster runs without job_submit/idletime"
rc_env || it_fail "idletime is not installed in $RC_PREFIX"
N=5
id=$(it_submit alice -J ft-preempt --idle-resources=only -w a100-1 --gres=gpu:a100:4 --max-restarts=1 \
	--open-mode=append "$RC_JOBS/probe-exec.sh" --on-notice release --save-mb 1 --work-seconds 25) ||
	it_fail "sbatch"
out=$(rc_out ft-preempt "$id")
for n in $(seq 1 $N); do
	it_wait_state "$id" RUNNING 60 || it_fail "run $n of $id did not start (Reason=$(it_job_field "$id" Reason))"
	rc_wait_count "$out" '^ready ' "$n" 60 || it_fail "run $n of $id never got ready"
	owner=$(it_submit bob -J ft-preempt-owner --quota=team-b -w a100-1 --gres=gpu:a100:4 "$RC_JOBS/owner.sh" 600) ||
		it_fail "owner sbatch $n"
	rc_wait_line "$(rc_out ft-preempt-owner "$owner")" '^started ' 60 || it_fail "owner $owner did not start"
	it_wait_state "$id" PENDING 30 || it_fail "job $id not requeued after preemption $n"
	it_assert_eq "$n" "$(it_job_field "$id" Restarts)" "Restarts of $id after preemption $n"
	rc_wait_admin "$id" "\"p\":$n,\"f\":0," 30 || it_fail "preemption $n of $id not counted: $(ft_admin "$id")"
	scancel "$owner"
	it_wait_state "$owner" "CANCELLED|COMPLETED" 60 || it_fail "owner $owner did not end"
done
ft_wait_final "$id" 120 || it_fail "job $id did not finish after $N preemptions"
it_assert_eq COMPLETED "$(it_job_field "$id" JobState)" "state of $id after $N preemptions with --max-restarts=1"
it_assert_eq $N "$(it_job_field "$id" Restarts)" "Restarts of $id"
ft_acct_has "$id" "\"p\":$N,\"f\":0," || it_fail "final counters of $id: $(ft_acct "$id")"
it_info "job $id: $N preemptions (released on the notice), completed; $(ft_acct "$id")"
it_pass
