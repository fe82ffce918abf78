#!/bin/bash
# Sync run type: the job of t-ft-async (three worker steps under idletime-run --srun) with
# --run-type=sync. SIGKILL to worker 1's step stops all three (the agent ends the other steps),
# the agent exits with the worker's status 137, the hook requeues the job once (Restarts=1,
# "f":1 after the backoff) and all three workers start again together in run 1, in new steps.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=ft-lib.sh
. "$IC_SRC/ft-lib.sh"
it_begin
ft_require_hook
id=$(ft_workers_submit sync 45) || it_fail "sbatch"
it_wait_state "$id" RUNNING 60 || it_fail "job $id did not start"
out=$(it_job_out "$id")
ic_poll 30 eval '[ "$(ft_worker_steps "$out" 0 2>/dev/null | wc -l)" -ge 3 ]' ||
	it_fail "three workers did not start: $(cat "$out")"
ic_poll 10 eval '[ "$(ft_running_steps "$id" | wc -l)" -ge 3 ]' || it_fail "three steps not running: $(ft_running_steps "$id" | tr '\n' ' ')"
run0=$(ft_worker_steps "$out" 0 | sort -n)
step1=$(echo "$run0" | awk '$1 == 1 { print $2 }')
it_info "job $id run 0 workers/steps: $(echo "$run0" | tr '\n' ' '); killing worker 1 = step $step1"
t_kill=$(date +%s)
scancel --signal=KILL "$id.$step1" || it_fail "scancel --signal=KILL $id.$step1"
# All steps end (the agent stops workers 0 and 2), then the job is requeued by the hook.
ic_poll 30 eval '[ -z "$(ft_running_steps "$id")" ]' || it_fail "steps still running after the kill: $(ft_running_steps "$id" | tr '\n' ' ')"
t_stopped=$(date +%s)
# The agent (batch step) writes its lines after the worker steps end: poll, do not read once.
ic_poll 15 grep -q "idletime/run: worker 1 exited with status 137" "$out" || it_fail "no agent line for worker 1's exit: $(grep idletime/run "$out")"
ic_poll 15 grep -q "idletime/run: exit status 137" "$out" || it_fail "agent did not exit 137: $(grep idletime/run "$out")"
it_wait_field "$id" Restarts 1 60 || it_fail "job $id not requeued after the kill"
rc_admin() { [[ $(ft_admin "$id") == *'"f":1,'* ]]; }
ic_poll 30 rc_admin || it_fail "failure not counted: $(ft_admin "$id")"
ic_poll 120 eval '[ "$(ft_worker_steps "$out" 1 | wc -l)" -ge 3 ]' || it_fail "run 1 did not start three workers: $(cat "$out")"
run1=$(ft_worker_steps "$out" 1 | sort -n)
it_assert_eq "0 1 2" "$(echo "$run1" | awk '{ print $1 }' | tr '\n' ' ' | sed 's/ $//')" "workers of run 1"
for w in 0 1 2; do it_assert_eq 2 "$(ft_worker_starts "$out" $w)" "starts of worker $w (run 0 and run 1)"; done
t_run1=$(awk '$1 == "run" && $2 == 1 && $3 == "worker" { print $4; exit }' "$out")
it_info "job $id: killed at $t_kill, all steps gone by $t_stopped, run 1 started at $t_run1 ($((t_run1 - t_kill)) s, backoff 10 s); run 1 workers/steps: $(echo "$run1" | tr '\n' ' ')"
ft_wait_final "$id" 120 || it_fail "job $id did not end"
it_assert_eq COMPLETED "$(it_job_field "$id" JobState)" "final state of $id"
ft_acct_has "$id" '"f":1,' || it_fail "final counters of $id: $(ft_acct "$id")"
it_pass
