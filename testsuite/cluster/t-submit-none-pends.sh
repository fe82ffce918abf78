#!/bin/bash
# `none` (or --quota alone) over quota pends with Reason=QOSGrpGRES and never borrows, even while
# idle capacity is free: its only partition is the quota partition.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
it_begin
grep -q '^JobSubmitPlugins=idletime' "$IC_CONF" || it_fail "cluster runs without job_submit/idletime"
SLEEP=$IT_JOBS_DIR/sleep.sh

full=$(it_submit alice -J none-full --idle-resources=none --quota=team-a --gres=gpu:a100:4 "$SLEEP" 600) || it_fail "sbatch"
it_wait_state "$full" RUNNING 30 || it_fail "job $full did not start"
it_assert_eq quota-team-a "$(it_job_field "$full" Partition)" "partition of $full"
over=$(it_submit alice -J none-over --idle-resources=none --gres=gpu:a100:1 "$SLEEP" 600) || it_fail "sbatch over"
it_wait_reason "$over" QOSGrpGRES 30 || it_fail "over-quota job $over: Reason=$(it_job_field "$over" Reason)"
it_assert_eq quota-team-a "$(it_job_field "$over" Partition)" "partitions of the over-quota job"
# 12 a100 GPUs stay free: it must still not start anywhere.
for _ in $(seq 1 10); do
	it_assert_eq PENDING "$(it_job_field "$over" JobState)" "state of over-quota job $over"
	sleep 1
done
it_info "job $over pends with QOSGrpGRES in quota-team-a for 10 s while 12 a100 GPUs are free"
it_pass
