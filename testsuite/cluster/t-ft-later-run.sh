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
try_once() {  # prints the victim's id when the interleaving was reached, else fails
	local v out owner
	v=$(it_submit alice -J later-run --idle-resources=only --open-mode=append -w a100-2 --gres=gpu:a100:4 \
		"$IT_JOBS_DIR/ft-job.sh" plan release:512 ok) || return 1
	out=$(rc_out later-run "$v")
	rc_wait_line "$out" '^ready ' 60 || return 1
	owner=$(it_submit bob -J later-run-owner --quota=team-b -w a100-2 --gres=gpu:a100:4 "$IT_JOBS_DIR/sleep.sh" 600) || return 1
	rc_wait_line "$out" '^notice ' 60 || return 1
	scancel "$owner"
	it_wait_state "$v" PENDING 60 || return 1
	# Never started: slurmctld shows no nodes for it.
	[ "$(it_job_field "$owner" NodeList)" = "(null)" ] || { scancel "$v"; return 1; }
	echo "$v"
}
for i in 1 2 3; do v=$(try_once) && break; it_info "try $i: the owner started before its cancel; again"; done
[ -n "${v:-}" ] || it_fail "could not cancel the owner before it started (3 tries)"
runuser -u alice -- scontrol update JobId="$v" StartTime=now || it_fail "alice could not release her job's hold"
ft_wait_final "$v" 60 || it_fail "run 1 of $v did not complete with its record"
ic_poll 90 grep -Eq "job $v: run [0-9]+ started \(or ended\) before its preemptor was named" "$FT_LOG" ||
	it_fail "the first hook did not stand down ($(grep "job $v" "$FT_LOG" | tail -n3 | tr '\n' '|'))"
sleep 3  # anything the first hook wrote would be in accounting by now
ft_final "$v" || it_fail "run 1's final record was overwritten: $(ft_acct "$v")"
it_info "final record: $(ft_acct "$v")"
it_pass
