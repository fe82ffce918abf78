#!/bin/bash
# Async run type: alice's job runs three worker steps (idletime-run --workers=3 --srun, one srun
# step each) under --run-type=async. SIGKILL to the tasks of worker 1's step (scancel
# --signal=KILL JOB.STEP) restarts only that worker, as a new step inside the same allocation
# (after the 10 s backoff); workers 0 and 2 keep their steps and start times and start once.
# The job is never requeued (Restarts=0), completes, and the hook adds the in-allocation restart
# to the failure counter ("f":1).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=ft-lib.sh
. "$IC_SRC/ft-lib.sh"
it_begin
ft_require_hook
id=$(ft_workers_submit async 45) || it_fail "sbatch"
it_wait_state "$id" RUNNING 60 || it_fail "job $id did not start"
out=$(it_job_out "$id")
ic_poll 30 eval '[ "$(ft_worker_steps "$out" 0 2>/dev/null | wc -l)" -ge 3 ]' ||
	it_fail "three workers did not start: $(cat "$out")"
ic_poll 10 eval '[ "$(ft_running_steps "$id" | wc -l)" -ge 3 ]' || it_fail "three steps not running: $(ft_running_steps "$id" | tr '\n' ' ')"
before=$(ft_running_steps "$id")
step1=$(ft_worker_steps "$out" 0 | awk '$1 == 1 { print $2 }')
[ -n "$step1" ] || it_fail "no step id for worker 1: $(cat "$out")"
it_info "job $id steps before: $(echo "$before" | tr '\n' ' '); killing worker 1 = step $step1"
t_kill=$(date +%s)
scancel --signal=KILL "$id.$step1" || it_fail "scancel --signal=KILL $id.$step1"
ic_poll 60 eval '[ "$(ft_worker_starts "$out" 1)" -ge 2 ]' || it_fail "worker 1 was not restarted: $(cat "$out")"
t_restart=$(grep '^worker 1 start ' "$out" | tail -n1 | awk '{ print $4 }')
new1=$(grep '^worker 1 start ' "$out" | tail -n1 | awk '{ print $8 }')
[ "$new1" != "$step1" ] || it_fail "worker 1 restarted in the same step $step1"
it_assert_eq 1 "$(ft_worker_starts "$out" 0)" "starts of worker 0"
it_assert_eq 1 "$(ft_worker_starts "$out" 2)" "starts of worker 2"
it_assert_eq RUNNING "$(it_job_field "$id" JobState)" "state of $id after the restart"
it_assert_eq 0 "$(it_job_field "$id" Restarts)" "job-level restarts of $id"
after=$(ft_running_steps "$id")
for w in 0 2; do
	s=$(ft_worker_steps "$out" 0 | awk -v w=$w '$1 == w { print $2 }')
	b=$(echo "$before" | awk -v s="$s" '$1 == s')
	a=$(echo "$after" | awk -v s="$s" '$1 == s')
	[ -n "$a" ] && [ "$a" = "$b" ] || it_fail "worker $w (step $s) did not keep running: before '$b', after '$a'"
done
echo "$after" | grep -q "^$new1 " || it_fail "restarted worker 1 (step $new1) not running: $after"
ic_poll 15 grep -q "idletime/run: worker 1 exited with status 137" "$out" || it_fail "no agent line for worker 1's exit: $(grep idletime/run "$out")"
it_info "job $id: worker 1 killed at $t_kill, restarted at $t_restart as step $new1; steps after: $(echo "$after" | tr '\n' ' ')"
ft_wait_final "$id" 120 || it_fail "job $id did not end"
it_assert_eq COMPLETED "$(it_job_field "$id" JobState)" "final state of $id"
it_assert_eq 0 "$(it_job_field "$id" Restarts)" "job-level restarts of $id at the end"
ft_acct_has "$id" '"f":1,' || it_fail "async restart not counted: $(ft_acct "$id")"
it_assert_eq 3 "$(grep -c '^worker [0-9] done' "$out")" "workers that finished"
it_pass
