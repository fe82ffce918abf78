#!/bin/bash
# A job that finishes its real work during the grace period completes normally and is not run
# again: alice's idle-time job gets the notice, ends its work 2 s later and exits 0 without
# release(). It must be COMPLETED with exit 0, Restarts=0, one accounting record, an ft record
# "completed" (f=0, p=0), still COMPLETED 15 s later; bob's job starts once it has exited.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=../../bench/reclaim/lib.sh
. "$IC_SRC/../../bench/reclaim/lib.sh"
it_begin
grep -q '^JobSubmitPlugins=idletime' "$IC_CONF" || it_fail "cluster runs without job_submit/idletime"
rc_hook_configured || it_fail "EpilogSlurmctld is not idletime-ft-hook (start.sh sets it up when PREFIX/sbin/idletime-ft-hook is installed)"
rc_env || it_fail "idletime is not installed in $RC_PREFIX"

rc_preempt_round probe-exec.sh finish fin --finish-seconds 2 || it_fail "round failed"
vout=$(rc_out fin "$RC_VICTIM")
[ -n "$RC_T_NOTICE" ] || it_fail "victim $RC_VICTIM got no notice: $(tr '\n' '|' <"$vout")"
grep -q '^done ' "$vout" || it_fail "victim $RC_VICTIM did not finish its work: $(tr '\n' '|' <"$vout")"
start=$(rc_sub "$RC_T_START" "$RC_T_SUBMIT")
# The owner waits for the next scheduling pass once the victim is done (see notice-and-release.md).
rc_le "$start" 60 || it_fail "owner started $start s after its sbatch (victim finished 2 s after the notice)"
it_wait_state "$RC_VICTIM" COMPLETED 30 || it_fail "finished victim $RC_VICTIM is $(it_job_field "$RC_VICTIM" JobState)"
rc_wait_admin "$RC_VICTIM" '"p":0,"f":0' 30 || it_fail "no ft record for $RC_VICTIM"
sleep 15
it_assert_eq COMPLETED "$(it_job_field "$RC_VICTIM" JobState)" "state of $RC_VICTIM 15 s later"
it_assert_eq 0:0 "$(it_job_field "$RC_VICTIM" ExitCode)" "exit code of $RC_VICTIM"
it_assert_eq 0 "$(it_job_field "$RC_VICTIM" Restarts)" "Restarts of $RC_VICTIM"
recs=$(sacct -n -X -P -j "$RC_VICTIM" -o State | tr '\n' ' ')
it_assert_eq "COMPLETED " "$recs" "accounting records of $RC_VICTIM"
it_info "victim $RC_VICTIM COMPLETED 0:0, not requeued; owner started $start s after its sbatch; record $(rc_admin_comment "$RC_VICTIM")"
it_pass
