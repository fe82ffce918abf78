#!/bin/bash
# A preempted idle-time job runs again within seconds of its owner's job ending (issue 14), not
# after Slurm 22.05's requeue hold (BeginTime = requeue + cred_expire + 1 s, 121 s here), with no
# admin command and no change to cred_expire. alice's job (probe-exec.sh, release() on the notice)
# is preempted 3 times by bob's guaranteed job on the same 4 GPUs; each time bob's job is
# cancelled after the victim is back in the queue. Asserted on Slurm's recorded times: the
# victim's new StartTime is at most 5 s after the owner's End (sacct). Each run is recorded as a
# preemption without a failure (no backoff). In the last round alice also has a newer idle-time
# job waiting for the same GPUs: the preempted one runs first (older job, higher priority).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=../../bench/reclaim/lib.sh
. "$IC_SRC/../../bench/reclaim/lib.sh"
it_begin
grep -q '^JobSubmitPlugins=idletime' "$IC_CONF" || it_fail "cluster runs without job_submit/idletime"
rc_hook_configured || it_fail "EpilogSlurmctld is not idletime-ft-hook"
rc_env || it_fail "idletime is not installed in $RC_PREFIX"

# sacct_end JOBID: End of the job's (last) allocation as slurmdbd recorded it, epoch seconds.
sacct_end() {
	local e deadline=$(($(date +%s) + 30))
	while :; do
		e=$(sacct -n -X -P -j "$1" -o End | tail -n1)
		[[ $e == 20* ]] && { date -d "$e" +%s; return 0; }
		[ "$(date +%s)" -lt "$deadline" ] || return 1
		sleep 0.5
	done
}

# wait_unheld JOBID SECONDS: true once the job's pending reason is no longer BeginTime.
wait_unheld() {
	local deadline=$(($(date +%s) + $2))
	while [ "$(it_job_field "$1" Reason)" = BeginTime ]; do
		[ "$(date +%s)" -lt "$deadline" ] || return 1
		sleep 0.5
	done
}

victim=$(it_submit alice -J resume --idle-resources=only -w a100-1 --gres=gpu:a100:4 \
	--open-mode=append "$RC_JOBS/probe-exec.sh" --on-notice release --save-mb 1) || it_fail "sbatch victim"
vout=$(rc_out resume "$victim")
it_wait_state "$victim" RUNNING 60 || it_fail "victim $victim never ran"
newer=
for round in 1 2 3; do
	rc_wait_count "$vout" '^ready ' "$round" 60 || it_fail "round $round: victim not ready: $(tr '\n' '|' <"$vout")"
	owner=$(it_submit bob -J resume-owner --quota=team-b -w a100-1 --gres=gpu:a100:4 "$RC_JOBS/owner.sh" 600) ||
		it_fail "sbatch owner"
	it_wait_state "$owner" RUNNING 60 || it_fail "round $round: owner $owner never ran"
	it_wait_field "$victim" Restarts "$round" 30 || it_fail "round $round: victim not requeued"
	rc_wait_admin "$victim" "\"p\":$round,\"f\":0" 30 || it_fail "round $round: run not recorded as a preemption without failure"
	if [ "$round" = 3 ]; then
		newer=$(it_submit alice -J resume-newer --idle-resources=only -w a100-1 --gres=gpu:a100:4 \
			"$RC_JOBS/owner.sh" 600) || it_fail "sbatch newer"
	fi
	# While the owner works, the hook lifts the requeue hold: the victim then waits for its GPUs,
	# not for a BeginTime. Seconds on a loaded machine; Slurm's own hold would last 121 s.
	sleep 1
	wait_unheld "$victim" 20 ||
		it_fail "round $round: victim still held 20 s after its requeue (Reason=BeginTime, EligibleTime=$(it_job_field "$victim" EligibleTime))"
	scancel "$owner"
	it_wait_state "$victim" RUNNING 90 || it_fail "round $round: victim never ran again (Reason=$(it_job_field "$victim" Reason))"
	vstart=$(date -d "$(it_job_field "$victim" StartTime)" +%s)
	oend=$(sacct_end "$owner") || it_fail "round $round: no End for owner $owner in sacct"
	gap=$((vstart - oend))
	it_info "round $round: owner $owner End $oend, victim $victim Start $vstart: resumed after $gap s"
	[ "$gap" -le 5 ] || it_fail "round $round: victim resumed $gap s after its owner ended (<= 5 s expected)"
done
it_assert_eq PENDING "$(it_job_field "$newer" JobState)" "newer idle-time job $newer of the same borrower"
echo "  resume after preemption: 3 rounds within 5 s of the owner's end"
it_pass
