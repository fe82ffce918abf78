#!/bin/bash
# Time limits hold for idle-time jobs (issue 12.1). The checkpoint notice signal is also Slurm's
# warning before a job's time limit; the library's release() requeues only when slurmctld records
# a preemption (preempt_time), so three train_digits.py jobs with -t 2 run at once (with -t 1 and
# GraceTime 30 the warning comes at start: Slurm warns warn_time plus its 30 s check period early):
# (T and R borrow a100-west, A runs in team-a's own a100-east: a guaranteed job would preempt
# idle-time jobs on its nodes.)
#  T  alice, --idle-resources=only: saves on the warning, ends TIMEOUT (sacct: one TIMEOUT record),
#     Restarts 0, its checkpoint exists, FT record "time limit reached"
#  R  alice, only + --requeue-at-time-limit --max-restarts=1: ends TIMEOUT, requeued by the FT hook
#     (Restarts 1, counted: "l":1), runs again, and at its second limit the budget is spent: TIMEOUT
#  A  alice, --idle-resources=acceptable, started in quota-team-a: ends TIMEOUT, Restarts 0
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=ft-lib.sh
. "$IC_SRC/ft-lib.sh"
# shellcheck source=../../bench/reclaim/lib.sh
. "$IC_SRC/../../bench/reclaim/lib.sh"
it_begin
ft_require_hook
grep -q '^JobSubmitPlugins=idletime' "$IC_CONF" || it_fail "cluster runs without job_submit/idletime"
rc_env || it_fail "idletime is not installed in $RC_PREFIX"
trap 'it_cleanup_jobs' EXIT
ARGS=(--steps 100000 --ckpt-every 50 --step-sleep 0.05)
CKPT_ROOT=$(jq -r '.idle.checkpoint_root' "${IDLETIME_TEST_CONFIG:-$IC_SRC/../../etc/idletime.json}")

t=$(it_submit alice -J tl-only --idle-resources=only -t 2 -w a100-3 --gres=gpu:a100:1 \
	"$RC_JOBS/train.sh" "${ARGS[@]}" --out "$IC_DIR/out/tl-only-params") || it_fail "sbatch T"
r=$(it_submit alice -J tl-requeue --idle-resources=only --requeue-at-time-limit --max-restarts=1 -t 2 \
	-w a100-4 --gres=gpu:a100:1 --open-mode=append "$RC_JOBS/train.sh" "${ARGS[@]}" \
	--out "$IC_DIR/out/tl-requeue-params") || it_fail "sbatch R"
a=$(it_submit alice -J tl-acc --idle-resources=acceptable -t 2 -w a100-1 --gres=gpu:a100:1 \
	"$RC_JOBS/train.sh" "${ARGS[@]}" --out "$IC_DIR/out/tl-acc-params") || it_fail "sbatch A"
for j in "$t" "$r" "$a"; do
	it_wait_state "$j" RUNNING 60 || it_fail "job $j did not start (Reason=$(it_job_field "$j" Reason))"
done
it_assert_eq quota-team-a "$(it_job_field "$a" Partition)" "partition acceptable job $a started in"
pt=$(it_job_field "$t" Partition) pr=$(it_job_field "$r" Partition)  # the one it runs in comes first
it_assert_eq "idle-a100-west|idle-a100-west" "${pt%%,*}|${pr%%,*}" "partitions of $t|$r"

# sacct_states ID: every accounting record of the job, oldest first
sacct_states() { sacct -n -X -D -P -j "$1" -o State 2>/dev/null | awk '{print $1}' | paste -sd,; }
sacct_timeout() { [ "$(sacct_states "$1")" = TIMEOUT ]; }
# ended_timeout ID NAME: the run saved on the warning and ended TIMEOUT, not requeued
ended_timeout() {
	local id=$1 out
	out=$(rc_out "$2" "$id")
	it_wait_state "$id" TIMEOUT 260 || it_fail "job $id is $(it_job_field "$id" JobState) Restarts=$(it_job_field "$id" Restarts), not TIMEOUT: $(tail -n4 "$out" | tr '\n' '|')"
	it_assert_eq 0 "$(it_job_field "$id" Restarts)" "Restarts of $id"
	grep -q '^notice ' "$out" || it_fail "job $id got no warning notice: $(tail -n3 "$out" | tr '\n' '|')"
	n=$(rc_word "$out" notice)
	grep -q "^saved $n\$" "$out" || it_fail "job $id did not save at the warning (step $n): $(tail -n3 "$out" | tr '\n' '|')"
	grep -q "idletime/ckpt: release: job $id got its time-limit warning" "$out" || it_fail "job $id: no release message"
	# The job's directory is <root>/<user>/<jobid>-<key> (spank_idletime(8)).
	[ -n "$(ls -A "$CKPT_ROOT/alice/$id"-* 2>/dev/null)" ] || it_fail "no checkpoint in $CKPT_ROOT/alice/$id-*"
	ft_wait_final "$id" 60 || it_fail "final FT record of $id"
	ft_acct_has "$id" '"k":"timeout"' || it_fail "FT record of $id: $(ft_acct "$id")"
	# slurmdbd gets the end record asynchronously: seconds, more on a loaded machine (CI).
	ic_poll 30 sacct_timeout "$id" || true  # the assertion below says what sacct shows
	it_assert_eq TIMEOUT "$(sacct_states "$id")" "sacct records of $id"
	it_info "job $id: notice at step $n, saved, ended TIMEOUT, Restarts 0"
}
ended_timeout "$t" tl-only
ended_timeout "$a" tl-acc

# R: requeued by the hook at its limit, counted, then limited by --max-restarts=1.
rout=$(rc_out tl-requeue "$r")
it_wait_field "$r" Restarts 1 260 || it_fail "job $r not requeued at its time limit: $(it_job_field "$r" JobState) $(tail -n3 "$rout" | tr '\n' '|')"
rc_wait_admin "$r" '"l":1' 60 || it_fail "time-limit requeue of $r not counted: $(rc_admin_comment "$r")"
# (sacct turns the requeued run's TIMEOUT record into REQUEUED; the FT record keeps the cause)
[[ $(ft_admin "$r") == *'"r":0,"k":"timeout","w":"time limit reached","a":"restart"'* ]] || it_fail "run 0 of $r: $(ft_admin "$r")"
it_wait_state "$r" RUNNING 90 || it_fail "requeued $r did not run again (Reason=$(it_job_field "$r" Reason))"
rc_wait_line "$rout" '^resumed ' 90 || it_fail "run 2 of $r did not resume from its checkpoint"
it_wait_state "$r" TIMEOUT 260 || it_fail "run 2 of $r: $(it_job_field "$r" JobState) Restarts=$(it_job_field "$r" Restarts)"
ft_wait_final "$r" 60 || it_fail "final FT record of $r"
ft_acct_has "$r" 'max restarts exceeded (last cause: time limit reached)' || it_fail "limit of $r: $(ft_acct "$r")"
it_assert_eq 1 "$(it_job_field "$r" Restarts)" "Restarts of $r after its second limit"
it_info "job $r: requeued once at its time limit (counted), TIMEOUT at the second: $(sacct_states "$r")"
it_pass
