#!/bin/bash
# Back-to-back jobs hand over their GPUs at once. 6 guaranteed jobs of bob (quota team-b), each
# needing all 4 GPUs of a100-1 for 1 s, are submitted together: each must start within 5 s of the
# previous one's end (1 s resolution). slurmctld runs no scheduling pass when an EpilogSlurmctld
# ends, and idletime-ft-hook keeps each job COMPLETING until it has detached; before the hook
# queued a pass once the job left COMPLETING, every hand-off waited for backfill's next pass
# (measured: 20-30 s each, every job started by sched/backfill).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
it_begin
export SLURM_TIME_FORMAT=%s
ids=()
for i in 1 2 3 4 5 6; do
	ids+=("$(it_submit bob -J handoff --quota=team-b -w a100-1 --gres=gpu:a100:4 "$IT_JOBS_DIR/sleep.sh" 1)") ||
		it_fail "sbatch $i"
done
for id in "${ids[@]}"; do
	it_wait_state "$id" COMPLETED 120 || it_fail "job $id is $(it_job_field "$id" JobState) (Reason=$(it_job_field "$id" Reason))"
done
# In start order (Slurm may start them in any order of the same priority).
mapfile -t runs < <(for id in "${ids[@]}"; do echo "$(it_job_field "$id" StartTime) $(it_job_field "$id" EndTime) $id"; done | sort -n)
gaps=()
for ((i = 1; i < ${#runs[@]}; i++)); do
	read -r _ prev_end _ <<<"${runs[$((i - 1))]}"
	read -r start _ id <<<"${runs[$i]}"
	gaps+=($((start - prev_end)))
	[ $((start - prev_end)) -le 5 ] || bad="${bad:-}job $id started $((start - prev_end)) s after the previous end; "
done
it_info "hand-off gaps (s): ${gaps[*]}"
[ -z "${bad:-}" ] || it_fail "$bad(gaps: ${gaps[*]})"
it_pass
