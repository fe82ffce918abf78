#!/bin/bash
# A preempted run's hook never overwrites the record of a later run (doc/security.md R3).
# alice's idle-time job is preempted by bob's owner, which is cancelled before it starts: the
# hook of run 0 then waits (GraceTime + 10 s) for a preemptor that never comes. Meanwhile alice
# releases Slurm's requeue hold herself (scontrol update StartTime=now, allowed on her own job)
# and run 1 completes at once; its hook stores the final record. When the first hook gives up,
# it must store nothing more: the accounting record keeps run 1's end.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=ft-lib.sh
. "$IC_SRC/ft-lib.sh"
# shellcheck source=../../bench/reclaim/lib.sh
. "$IC_SRC/../../bench/reclaim/lib.sh"
it_begin
ft_require_hook
rc_env || it_fail "idletime is not installed in $RC_PREFIX"
# Run 0 traps the notice and keeps running until Slurm requeues it at the end of GraceTime: the
# owner cannot start before then, so its cancel always comes first (a victim that releases at
# once lets the owner start within a second, before any cancel). Slurm still requeues a job it
# picked as a victim (never un-picked), so run 0 ends PREEMPTED with no preemptor ever running.
v=$(it_submit alice -J later-run --idle-resources=only --open-mode=append -w a100-2 --gres=gpu:a100:4 \
	"$IT_JOBS_DIR/ft-job.sh" plan wait ok) || it_fail "cannot submit alice's idle-time job"
out=$(rc_out later-run "$v")
rc_wait_line "$out" '^plan run 0' 60 || it_fail "run 0 of $v did not start"
owner=$(it_submit bob -J later-run-owner --quota=team-b -w a100-2 --gres=gpu:a100:4 "$IT_JOBS_DIR/sleep.sh" 600) ||
	it_fail "cannot submit bob's owner job"
rc_wait_line "$out" '^notice ' 60 || it_fail "run 0 of $v got no preemption notice"
scancel "$owner"
it_wait_state "$owner" CANCELLED 30 || it_fail "bob's owner $owner was not cancelled"
nodes=$(it_job_field "$owner" NodeList)  # empty (or "(null)") for a job that never ran
[ -z "$nodes" ] || [ "$nodes" = "(null)" ] || it_fail "bob's owner $owner started before its cancel"
it_wait_state "$v" PENDING 150 || it_fail "Slurm did not requeue $v at the end of GraceTime"
rc_wait_line "$out" '^term ' 10 || it_fail "run 0 of $v ended without Slurm's SIGTERM"
# On a100-2 slurmd still holds the revoked credential of run 0 (until cred_expire): a run started
# there now is killed at once ("Job credential revoked", exit 1). Run 1 goes to a100-1.
runuser -u alice -- scontrol update JobId="$v" NodeList=a100-1 StartTime=now ||
	it_fail "alice could not release her job's hold"
ft_wait_final "$v" 60 || it_fail "run 1 of $v did not complete with its record"
ic_poll 90 grep -Eq "job $v: run [0-9]+ started \(or ended\) before its preemptor was named" "$FT_LOG" ||
	it_fail "the first hook did not stand down ($(grep "job $v" "$FT_LOG" | tail -n3 | tr '\n' '|'))"
sleep 3  # anything the first hook wrote would be in accounting by now
ft_final "$v" || it_fail "run 1's final record was overwritten: $(ft_acct "$v")"
ft_acct "$v" | grep -q '"r":1,"k":"ok","w":"completed","a":"complete"' ||
	it_fail "run 1 did not complete: $(ft_acct "$v")"
it_info "final record: $(ft_acct "$v")"
it_pass
