#!/bin/bash
# A hook stopped mid-way (security.md R5). `systemctl restart slurmctld` kills every process of
# the unit's cgroup, and the detached idletime-ft-hook processes are in it. Alice's job fails with
# exit 137 (retryable) on a100-2 while that node's slurmd is stopped (SIGSTOP): the job stays
# COMPLETING, so its hook waits in its detached part to requeue it. The test kills that hook
# (SIGKILL, as systemd does) and lets the node go on. Then:
#  (a) `idletime-ft-hook --recover` while the job is still COMPLETING leaves the entry for later;
#      once the node goes on, nothing requeues the job by itself: FAILED, Restarts=0, entry left
#      (before the journal it stayed FAILED for good);
#  (b) the hook of the next job that ends finishes the work: the job is requeued (Restarts=1),
#      counted once ("f":1), its run 1 completes, the hook log says so, and the entry is gone;
#  (c) `idletime-ft-hook --recover` removes a symlinked entry without following it and reports
#      0 recovered; --recover with --job is refused (exit 2); the journal is 0700, owned by the
#      user slurmctld runs as.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=ft-lib.sh
. "$IC_SRC/ft-lib.sh"
it_begin
ft_require_hook
JDIR=$IC_SPOOL/ft-hook-wake.jobs
SLURMD=$(ic_pid slurmd-a100-2) || it_fail "no running slurmd for a100-2"
trap 'kill -CONT "$SLURMD" 2>/dev/null; it_cleanup_jobs' EXIT
# The processes running program $1 whose environment names job $2 (the wrapper execs the hook,
# and the job's batch script runs `sleep`).
job_pids() {
	local p
	for p in /proc/[0-9]*; do
		[[ $(readlink "$p/exe" 2>/dev/null) == */"$1" ]] || continue
		tr '\0' '\n' <"$p/environ" 2>/dev/null | grep -qx "SLURM_JOB_ID=$2" && echo "${p#/proc/}"
	done
}
hook_pids() { job_pids idletime-ft-hook "$1"; }
has_hook() { [ -n "$(hook_pids "$1")" ]; }
script_sleeps() { [ -n "$(job_pids sleep "$1")" ]; }
logged() { grep -qF -- "$1" "$FT_LOG"; }
not_completing() { [ -z "$(squeue -h -j "$1" -t CG -o %i 2>/dev/null)" ]; }

# No other hook may sweep the journal during (a): wait for those of earlier tests to end.
any_hook() {
	local p
	for p in /proc/[0-9]*; do [[ $(readlink "$p/exe" 2>/dev/null) == */idletime-ft-hook ]] && return 0; done
	return 1
}
no_hook() { ! any_hook; }
ic_poll 300 no_hook || it_fail "idletime-ft-hook processes of earlier jobs still running after 300 s"
rm -f "$JDIR"/[0-9]*
# shellcheck disable=SC2016 # expands in the job
id=$(it_submit alice -J ft-stopped -p quota-team-a -w a100-2 -t 5 --max-restarts=2 \
	--wrap='[ "${SLURM_RESTART_COUNT:-0}" -gt 0 ] && exit 0; sleep 8; exit 137') || it_fail "sbatch"
it_wait_state "$id" RUNNING 60 || it_fail "job $id did not start (Reason=$(it_job_field "$id" Reason))"
# RUNNING is slurmctld's word; the script starts only once slurmd has served the launch RPC. Stopping
# slurmd before that leaves the job RUNNING with no script, and no hook ever runs (stop 26's CI).
ic_poll 30 script_sleeps "$id" || it_fail "the batch script of job $id did not start within 30 s of RUNNING"
kill -STOP "$SLURMD"
ic_poll 30 logged "job $id run 0: exit code 137" || it_fail "the hook did not judge run 0: $(tail -n 3 "$FT_LOG")"
ic_poll 10 has_hook "$id" || it_fail "no hook process of job $id in flight"
[ -f "$JDIR/$id" ] || it_fail "no journal entry $JDIR/$id while the hook works"
pids=$(hook_pids "$id")
# shellcheck disable=SC2086 # one pid per word
kill -KILL $pids
it_info "killed hook process(es) ${pids//$'\n'/ } of job $id while it waited to requeue"
cmd=$(sed -n 's/^exec //p' "$FT_HOOK_WRAPPER")
# shellcheck disable=SC2086 # the wrapper's own words
out=$(SLURM_CONF=$IC_CONF $cmd --recover) || it_fail "--recover exited $?: $out"
[[ $out == *": 0 stopped hook(s) recovered from $JDIR" ]] || it_fail "--recover while completing said: $out"
logged "job $id: its hook stopped before it had finished; the job is still completing: left for a later hook" ||
	it_fail "--recover while completing did not say so: $(grep -F "job $id" "$FT_LOG" | tail -n 2)"
[ -f "$JDIR/$id" ] || it_fail "--recover dropped the entry of a job still completing"
kill -CONT "$SLURMD"
# Usually slurmd reads the terminate still queued on its socket. If that RPC timed out meanwhile,
# the agent does not retry it (deallocate_nodes: retry = 0); slurmctld resends it (re_kill_job) from
# its purge every 60 s, and only once the node answers a ping again (every SlurmdTimeout/3 = 100 s
# here): up to about 160 s plus the epilog (stop 26's CI: 60 s was not enough under load).
ic_poll 200 not_completing "$id" || it_fail "job $id still completing 200 s after its node went on"

# (a) nothing else requeues it
sleep 3
it_assert_eq FAILED "$(it_job_field "$id" JobState)" "state of $id after its hook was killed"
it_assert_eq 0 "$(it_job_field "$id" Restarts)" "restarts of $id after its hook was killed"
[ -f "$JDIR/$id" ] || it_fail "the killed hook's journal entry is gone"

# (b) the next job's end finishes the work
other=$(it_submit bob -J ft-stopped-next -p quota-team-b -t 2 --wrap=true) || it_fail "sbatch other"
it_wait_field "$id" Restarts 1 90 || it_fail "job $id not requeued after job $other ended: $(grep -F "job $id" "$FT_LOG" | tail -n 3)"
logged "job $id: finishing the work its hook left when it was stopped" || it_fail "no recovery line for $id"
ft_wait_final "$id" 120 || it_fail "run 1 of $id did not complete"
ft_acct_has "$id" '"p":0,"f":1,' || it_fail "job $id: failure not counted once: $(ft_acct "$id")"
it_assert_eq COMPLETED "$(it_job_field "$id" JobState)" "state of $id after run 1"
[ ! -e "$JDIR/$id" ] || it_fail "journal entry of $id left after its recovery"

# (c) --recover by hand: a symlink is removed, not followed; usage errors
ctld_user=$(ps -o user= -p "$(ic_pid slurmctld)")
it_assert_eq "700 $ctld_user" "$(stat -c '%a %U' "$JDIR")" "journal mode and owner"
ln -s /etc/hostname "$JDIR/999999"
# shellcheck disable=SC2086 # the wrapper's own words
out=$(SLURM_CONF=$IC_CONF $cmd --recover) || it_fail "--recover exited $?: $out"
[[ $out == *": 0 stopped hook(s) recovered from $JDIR" ]] || it_fail "--recover said: $out"
[ ! -L "$JDIR/999999" ] || it_fail "--recover left the symlinked entry"
[ -s /etc/hostname ] || it_fail "/etc/hostname emptied"
logged "journal $JDIR/999999: not a regular file: removed" || it_fail "symlinked entry not logged"
# shellcheck disable=SC2086
SLURM_CONF=$IC_CONF $cmd --recover --job 5 2>/dev/null
it_assert_eq 2 "$?" "exit status of --recover --job"
it_pass
