#!/bin/bash
# timeout: 400
# The ft hook's counters cannot be reset by the job, and the site's max_restarts caps a job's
# --max-restarts (issue 11 item 7). On the default cluster (fault_tolerance.max_restarts 3,
# backoff 10 s x2):
# (a) a job with --max-restarts=1 exits 137; from its second run on it forges an agent report in
#     its Comment, "w":4294967295 async restarts, then exits 137 again. Before the fix the
#     failure counter wrapped (1 + 4294967295 = 0) and the job restarted forever; now it
#     saturates: FAILED after run 1 (Restarts=1), AdminComment "f":4294967295, "max restarts
#     exceeded".
# (b) a job with --max-restarts=50 that always exits 137 ends FAILED after the site's 3
#     restarts (Restarts=3), the hook log says its 50 was capped to 3.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=ft-lib.sh
. "$IC_SRC/ft-lib.sh"
it_begin
ft_require_hook
P=(-p quota-team-a -t 5 --open-mode=append)
forge='r=${SLURM_RESTART_COUNT:-0}; echo "run $r"
if [ "$r" -ge 1 ]; then
	scontrol update jobid="$SLURM_JOB_ID" comment="idletime-run:{\"r\":$r,\"x\":137,\"w\":4294967295}" || exit 3
fi
exit 137'
a=$(it_submit alice -J sec-forged "${P[@]}" --max-restarts=1 --wrap="$forge") || it_fail "sbatch a"
b=$(it_submit alice -J sec-cap "${P[@]}" --max-restarts=50 "$IT_JOBS_DIR/ft-job.sh" exit 137) || it_fail "sbatch b"

ft_wait_final "$a" 90 || it_fail "job $a did not end (Restarts=$(it_job_field "$a" Restarts)); forged report reset the counter?"
it_assert_eq FAILED "$(it_job_field "$a" JobState)" "state of the forging job $a"
it_assert_eq 1 "$(it_job_field "$a" Restarts)" "restarts of the forging job $a"
ft_acct_has "$a" '"f":4294967295' || it_fail "job $a: AdminComment $(ft_acct "$a") (want saturated \"f\":4294967295)"
ft_acct_has "$a" 'max restarts exceeded' || it_fail "job $a: AdminComment $(ft_acct "$a")"
it_info "(a) forged w=4294967295: $a FAILED after 1 restart; $(ft_acct "$a" | grep -o '"f":[0-9]*')"

ft_wait_final "$b" 240 || it_fail "job $b did not end (Restarts=$(it_job_field "$b" Restarts))"
it_assert_eq FAILED "$(it_job_field "$b" JobState)" "state of $b"
it_assert_eq 3 "$(it_job_field "$b" Restarts)" "restarts of $b (--max-restarts=50, site limit 3)"
grep -q "job $b: max_restarts 50 asked by the job is above the site's limit 3: using 3" "$FT_LOG" ||
	it_fail "no cap line for job $b in $FT_LOG"
it_info "(b) --max-restarts=50: $b FAILED after the site's 3 restarts"
it_pass
