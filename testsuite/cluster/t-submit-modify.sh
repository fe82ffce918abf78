#!/bin/bash
# `scontrol update job partition=...` cannot escape the submission rules. job_modify sees only the
# new values (job_record_t is opaque with public headers), so for non-admins any new partition list
# naming an idletime partition is refused (Slurm prints only "Access/permission denied"; the reason
# is in slurmctld's log); other updates pass. Admins may move jobs, and Slurm's AllowAccounts still
# keeps a job from running in another tenant's partitions (checked when scheduling).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
it_begin
grep -q '^JobSubmitPlugins=idletime' "$IC_CONF" || it_fail "cluster runs without job_submit/idletime"
LOG=$IC_LOGD/slurmctld.log

# as_user USER ARGS...: scontrol as USER; prints its output, returns its status.
as_user() { runuser -u "$1" -- env SLURM_CONF="$SLURM_CONF" scontrol "${@:2}" 2>&1; }
# refused USER ID PARTITION: the update fails, is logged, and the job keeps its partitions.
refused() {
	local before out
	before=$(it_job_field "$2" Partition)
	if out=$(as_user "$1" update jobid="$2" partition="$3"); then it_fail "$1 moved job $2 to $3 ($out)"; fi
	grep -q "Access/permission denied" <<<"$out" || it_fail "update of $2 to $3: unexpected '$out'"
	ic_poll 5 grep -q "refused update of job $2 by uid $(id -u "$1"): idletime: partition \"${3%%,*}\" is managed by idletime" "$LOG" ||
		it_fail "no refusal of job $2 -> $3 in $LOG"
	it_assert_eq "$before" "$(it_job_field "$2" Partition)" "partitions of job $2 after the refused update"
	it_info "$1: update job $2 partition=$3 refused: $out"
}

# A pending `none` job (quota team-a full) must not borrow, in its tenant or another.
full=$(it_submit alice --quota=team-a -N1 --gres=gpu:a100:4 --wrap='sleep 600') || it_fail "sbatch full"
it_wait_state "$full" RUNNING 30 || it_fail "job $full did not start"
none=$(it_submit alice --idle-resources=none -N1 --gres=gpu:a100:1 --wrap='sleep 600') || it_fail "sbatch none"
it_wait_reason "$none" QOSGrpGRES 30 || it_fail "none job $none: Reason=$(it_job_field "$none" Reason)"
refused alice "$none" idle-a100-east
refused alice "$none" idle-h100-beta
refused alice "$none" quota-team-a,idle-a100-west
# A held `only` job must not become guaranteed.
only=$(it_submit alice --hold --idle-resources=only -N1 --gres=gpu:a100:1 --wrap='sleep 600') || it_fail "sbatch only"
it_wait_state "$only" PENDING 10 || it_fail "only job $only not pending"
refused alice "$only" quota-team-a
# Other updates of the same job are not idletime's business.
as_user alice update jobid="$only" name=renamed >/dev/null || it_fail "alice cannot rename her job"
it_assert_eq renamed "$(it_job_field "$only" JobName)" "name after update"
# Admins may move a job within the rules ...
scontrol update jobid="$none" partition=idle-a100-east || it_fail "root cannot move job $none"
it_assert_eq idle-a100-east "$(it_job_field "$none" Partition)" "partition after root's update"
# ... and AllowAccounts (team-x only) keeps even a job root moved there off beta's nodes: without
# EnforcePartLimits the update is accepted, but the scheduler never starts it (account not permitted).
plain=$(it_submit alice --hold -p quota-team-a --gres=gpu:1 --wrap='sleep 600') || it_fail "sbatch plain"
scontrol update jobid="$plain" partition=idle-h100-beta || it_fail "root cannot move job $plain"
scontrol release "$plain" || it_fail "release $plain"
it_wait_reason "$plain" "Job's_account_not_permitted_to_use_this_partition_.*" 30 || it_fail "job $plain in idle-h100-beta: $(it_job_field "$plain" JobState) Reason=$(it_job_field "$plain" Reason)"
for _ in 1 2 3 4 5; do
	it_assert_eq PENDING "$(it_job_field "$plain" JobState)" "team-a's job $plain in beta's idle partition"
	sleep 1
done
it_assert_eq "" "$(squeue -h -t R -w 'h100-[3-4]' -o %i)" "jobs running on h100-[3-4] while $plain pends"
it_info "root moved $plain to idle-h100-beta; it pends (account not permitted in that partition) while nothing runs on h100-[3-4]"
it_pass
