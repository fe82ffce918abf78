#!/bin/bash
# No start-and-preempt loop (issue 14, goal 4). bob's 2-node owner job (quota team-b, 2 GPUs on
# each of a100-1 and a100-2) reclaims two idle-time jobs of alice at once: F on a100-1 saves and
# releases at once, S on a100-2 keeps working THRASH_SLOW_S (20) s after its notice, as a slow
# save would. F is requeued at once while the owner still waits for a100-2, with a100-1's GPUs
# free meanwhile. F must not start on the capacity its owner is about to use only to be preempted
# again: idletime-ft-hook lifts Slurm's requeue hold only once it has named the preemptor, i.e.
# once the owner runs (or after GraceTime + 10 s). Until the owner runs, F has started once (its first run)
# and been preempted once. Once the owner ends, F runs again within 10 s (goal 2) and resumes
# from its checkpoint. Measured: owner started 24.7 s after S's notice (S works 20 s), F ran
# again 2.3 s after the owner's scancel.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=../../bench/reclaim/lib.sh
. "$IC_SRC/../../bench/reclaim/lib.sh"
it_begin
grep -q '^JobSubmitPlugins=idletime' "$IC_CONF" || it_fail "cluster runs without job_submit/idletime"
rc_env || it_fail "idletime is not installed in $RC_PREFIX"
slow=${THRASH_SLOW_S:-20}
f=$(it_submit alice -J thr-fast --idle-resources=only -w a100-1 --gres=gpu:a100:4 --open-mode=append \
	"$RC_JOBS/probe-exec.sh" --on-notice release --save-mb 4) || it_fail "sbatch F"
s=$(it_submit alice -J thr-slow --idle-resources=only -w a100-2 --gres=gpu:a100:4 \
	"$RC_JOBS/probe-exec.sh" --on-notice finish --finish-seconds "$slow") || it_fail "sbatch S"
fout=$(rc_out thr-fast "$f")
rc_wait_line "$fout" '^ready ' 90 || it_fail "F ($f) never ran"
rc_wait_line "$(rc_out thr-slow "$s")" '^ready ' 90 || it_fail "S ($s) never ran"
o=$(it_submit bob -J thr-owner --quota=team-b -N 2 -w 'a100-[1-2]' --gres=gpu:a100:2 "$RC_JOBS/owner.sh" 600) ||
	it_fail "owner sbatch"
oout=$(rc_out thr-owner "$o")
rc_wait_line "$fout" '^released ' 60 || it_fail "F ($f) did not release: $(tr '\n' '|' <"$fout")"
rc_wait_line "$oout" '^started ' $((slow + 60)) || it_fail "owner $o did not start (Reason=$(it_job_field "$o" Reason))"
t_owner=$(rc_word "$oout" started)
t_notice=$(rc_word "$(rc_out thr-slow "$s")" notice 1)
it_info "owner started $(rc_sub "$t_owner" "$t_notice") s after S's notice (S works $slow s after it)"
it_assert_eq 1 "$(grep -c '^ready ' "$fout")" "runs of F started before its owner ran"
it_assert_eq 1 "$(it_job_field "$f" Restarts)" "Restarts of F while its owner runs"
it_assert_eq PENDING "$(it_job_field "$f" JobState)" "state of F while its owner runs"
scancel "$o"
t_end=$(rc_now)
rc_wait_count "$fout" '^ready ' 2 60 || it_fail "F ($f) did not run again after its owner ended (Reason=$(it_job_field "$f" Reason))"
t_again=$(sed -n 's/^ready \([0-9.]*\) .*/\1/p' "$fout" | sed -n 2p)
it_info "F ran again $(rc_sub "$t_again" "$t_end") s after its owner's scancel"
rc_le "$(rc_sub "$t_again" "$t_end")" 10 || it_fail "F ran again $(rc_sub "$t_again" "$t_end") s after the owner ended (more than 10 s)"
grep -q '^ready .* step=2 ' "$fout" || it_fail "F did not resume from its checkpoint: $(tr '\n' '|' <"$fout")"
it_pass
