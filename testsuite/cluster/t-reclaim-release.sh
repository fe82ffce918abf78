#!/bin/bash
# Fast release vs Slurm alone, same GraceTime. (1) alice's idle-time job saves 64 MiB on the
# notice and calls release(): bob's guaranteed job must start within save time + 10 s of its
# sbatch; the victim is requeued (Restarts=1), recorded by idletime-ft-hook as a preemption
# (AdminComment p=1, f=0), and when it runs again it resumes from its checkpoint (step 2).
# (2) the same victim ignoring the notice (no release): bob waits at least GraceTime + KillWait
# (Slurm acts on GraceTime in a 30 s pass, then SIGTERM, SIGKILL KillWait later; measured 74-88 s).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=../../bench/reclaim/lib.sh
. "$IC_SRC/../../bench/reclaim/lib.sh"
it_begin
grep -q '^JobSubmitPlugins=idletime' "$IC_CONF" || it_fail "cluster runs without job_submit/idletime"
rc_hook_configured || it_fail "EpilogSlurmctld is not idletime-ft-hook (start.sh sets it up when PREFIX/sbin/idletime-ft-hook is installed)"
rc_env || it_fail "idletime is not installed in $RC_PREFIX"
grace=$(it_partition_field idle-a100-east GraceTime)

# (1) idletime: save + release.
rc_preempt_round probe-exec.sh release rel --save-mb 64 || it_fail "release round failed"
start=$(rc_sub "$RC_T_START" "$RC_T_SUBMIT")
[ -n "$RC_SAVE_S" ] || it_fail "victim $RC_VICTIM did not save: $(tr '\n' '|' <"$(rc_out rel "$RC_VICTIM")")"
# save + 10 s: far below GraceTime (30 s), which the owner waits without release(); the latency
# itself is measured by bench/reclaim.
rc_le "$start" "$(rc_sub "$RC_SAVE_S" -10)" || it_fail "owner started $start s after its sbatch (save $RC_SAVE_S s + 10 s allowed)"
it_info "idletime: owner $RC_OWNER started $start s after its sbatch (save $RC_SAVE_S s, GraceTime $grace)"
victim=$RC_VICTIM owner=$RC_OWNER
it_wait_state "$victim" PENDING 30 || it_fail "released victim $victim not requeued"
it_assert_eq 1 "$(it_job_field "$victim" Restarts)" "Restarts of $victim"
rc_wait_admin "$victim" '"p":1,"f":0' 30 || it_fail "released run of $victim not recorded as a preemption"
it_info "victim $victim: PENDING Restarts=1, ft record $(rc_admin_comment "$victim")"
# The record names the checkpoint the next run resumes from ("c", which `idletime jobs` shows as
# RESUMED_FROM): the final save, taken after the notice and published in the Comment before the
# requeue. (A change that skipped the Comment update of a preempted run's last save, to spare
# slurmctld one write per victim, left "c" naming an older checkpoint or none.)
[ -n "$RC_T_NOTICE" ] || it_fail "victim $victim printed no notice line: $(tr '\n' '|' <"$(rc_out rel "$victim")")"
ckpt=$(rc_admin_comment "$victim" | grep -o '"c":[0-9]*' | tail -n 1 | cut -d: -f2)
[ -n "$ckpt" ] && [ "$ckpt" -ge "${RC_T_NOTICE%.*}" ] ||
	it_fail "released run's record names checkpoint '${ckpt:-none}', not its final save (notice at ${RC_T_NOTICE%.*})"
scancel "$owner"
it_wait_state "$victim" RUNNING 60 || it_fail "requeued victim $victim never ran again (Reason=$(it_job_field "$victim" Reason))"
vout=$(rc_out rel "$victim")
rc_wait_line "$vout" '^ready .* step=2 ' 60 || it_fail "victim $victim did not resume from its checkpoint: $(tr '\n' '|' <"$vout")"
it_cleanup_jobs || it_fail "jobs left after the release round"

save1=$RC_SAVE_S
# (2) Slurm alone: the victim ignores the notice.
RC_OWNER_TIMEOUT=240 rc_preempt_round probe-exec.sh ignore native --save-mb 1 || it_fail "native round failed"
native=$(rc_sub "$RC_T_START" "$RC_T_SUBMIT")
kw=$(scontrol show config | sed -n 's/^KillWait *= *\([0-9]*\).*/\1/p')
# slurmctld keeps the preemption time in whole seconds, so its GraceTime can end up to 1 s early.
rc_le $((grace + kw - 1)) "$native" ||
	it_fail "Slurm alone: owner started after $native s, expected >= GraceTime $grace + KillWait $kw - 1 s"
it_wait_state "$RC_VICTIM" PENDING 30 || it_fail "native victim $RC_VICTIM not requeued"
it_info "Slurm alone: owner $RC_OWNER started $native s after its sbatch (notice at $(rc_sub "$RC_T_NOTICE" "$RC_T_SUBMIT") s)"
echo "  reclaim: idletime ${start} s (save ${save1} s) vs Slurm alone ${native} s"
it_pass
