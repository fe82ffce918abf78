#!/bin/bash
# A real PyTorch job (train_digits.py, Debian's torch) runs as alice's `only` idle-time job and is
# preempted 3 times at random moments by bob's guaranteed jobs. Each time it saves on the notice,
# releases, is requeued and resumes from its newest checkpoint; its final parameters must be
# bitwise equal to an uninterrupted run's, and per preemption at most one training step is lost
# (step at the notice - step it resumed from, from the job's log lines).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=../../bench/reclaim/lib.sh
. "$IC_SRC/../../bench/reclaim/lib.sh"
it_begin
grep -q '^JobSubmitPlugins=idletime' "$IC_CONF" || it_fail "cluster runs without job_submit/idletime"
rc_env || it_fail "idletime is not installed in $RC_PREFIX"
STEPS=${CKPT_RESUME_STEPS:-500}
ARGS=(--steps "$STEPS" --ckpt-every 50 --step-sleep 0.05)

# Uninterrupted reference run (outside Slurm: no job id, so no munge credential).
ref=$(runuser -u alice -- mktemp -d /tmp/idletime-ref.XXXXXX) || it_fail "mktemp"
trap 'rm -rf "$ref"; it_cleanup_jobs' EXIT
runuser -u alice -- env -u SLURM_JOB_ID "$RC_JOBS/train.sh" "${ARGS[@]}" --ckpt-dir "$ref/ckpt" \
	--out "$ref/params" >"$ref/log" 2>&1 || it_fail "reference run failed: $(tail -n3 "$ref/log")"
want=$(sha256sum <"$ref/params" | cut -d' ' -f1)

id=$(it_submit alice -J resume --idle-resources=only -w a100-1 --gres=gpu:a100:4 --open-mode=append \
	"$RC_JOBS/train.sh" "${ARGS[@]}" --out "$IC_DIR/out/resume-params") || it_fail "sbatch"
out=$(rc_out resume "$id")
for n in 1 2 3; do
	it_wait_state "$id" RUNNING 60 || it_fail "run $n of $id did not start (Reason=$(it_job_field "$id" Reason))"
	rc_wait_count "$out" "^(fresh|resumed)" "$n" 90 || it_fail "run $n never started training"
	sleep "$(awk -v r="$RANDOM" 'BEGIN { printf "%.2f", 1 + 5 * r / 32767 }')"
	grep -q '^done ' "$out" && it_fail "job finished before preemption $n (raise CKPT_RESUME_STEPS)"
	owner=$(it_submit bob -J resume-owner --quota=team-b -w a100-1 --gres=gpu:a100:4 "$RC_JOBS/owner.sh" 600) || it_fail "owner sbatch"
	rc_wait_line "$(rc_out resume-owner "$owner")" '^started ' 60 || it_fail "owner $owner did not start"
	it_wait_state "$id" PENDING 30 || it_fail "job $id not requeued after preemption $n"
	it_assert_eq "$n" "$(it_job_field "$id" Restarts)" "Restarts of $id after preemption $n"
	scancel "$owner"
	it_wait_state "$owner" "CANCELLED|COMPLETED" 60 || it_fail "owner $owner did not end"
done
it_wait_state "$id" COMPLETED $((STEPS / 5 + 120)) || it_fail "job $id is $(it_job_field "$id" JobState) (log: $(tail -n3 "$out" | tr '\n' '|'))"
got=$(sha256sum <"$IC_DIR/out/resume-params" | cut -d' ' -f1)
it_assert_eq "$want" "$got" "sha256 of the final parameters (resumed 3x vs uninterrupted)"
notices=$(grep '^notice ' "$out" | awk '{print $2}' | tr '\n' ' ')
resumes=$(grep '^resumed ' "$out" | awk '{print $2}' | tr '\n' ' ')
read -ra na <<<"$notices"
read -ra ra <<<"$resumes"
[ ${#na[@]} = 3 ] && [ ${#ra[@]} = 3 ] || it_fail "expected 3 notices and 3 resumes, got '$notices' / '$resumes'"
for i in 0 1 2; do
	lost=$((na[i] - ra[i]))
	[ $lost -ge 0 ] && [ $lost -le 1 ] || it_fail "preemption $((i + 1)): notice at step ${na[i]}, resumed at ${ra[i]} ($lost steps lost)"
done
it_info "job $id: notices at steps $notices resumed at $resumes; params sha256 $got = reference"
it_pass
