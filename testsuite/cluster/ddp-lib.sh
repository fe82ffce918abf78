# shellcheck shell=bash
# Shared body of t-ckpt-ddp-*.sh: a 4-rank DDP job (train_ddp.py, gloo) as alice's `only`
# idle-time job, preempted DDP_PREEMPTIONS times (default 3, as issue 17 asks) at random
# steps by bob's guaranteed job on a100-1. Every time all ranks must stop at one step, save it
# together, release, leave no rank running, be requeued and resume from that step; the final
# parameters must be bitwise equal to an uninterrupted 4-rank run's.
# Source after lib.sh and bench/reclaim/lib.sh, then: ddp_preempt_test NAME JOB_SCRIPT SBATCH_ARGS...

DDP_STEPS=${DDP_STEPS:-600}
DDP_ARGS=(--steps "$DDP_STEPS" --ckpt-every 100 --step-sleep 0.05 --timeout 60)

# Uninterrupted 4-rank reference outside Slurm (no job id: no munge credential), computed once per
# cluster state dir and step count (the two DDP tests share it).
ddp_reference() {
	local ref=$IC_DIR/out/ddp-ref-$DDP_STEPS
	(
		flock 9
		[ -s "$ref.sha" ] && exit 0
		rm -rf "$ref" && mkdir -p "$ref" && chown alice "$ref" || exit 1
		runuser -u alice -- env -u SLURM_JOB_ID PYTHONPATH="$PYTHONPATH" IDLETIME_CKPT_LIB="$IDLETIME_CKPT_LIB" \
			IDLETIME_MUNGE_SOCKET="$IC_SOCK" "$RC_JOBS/ddp-local.sh" "${DDP_ARGS[@]}" --ckpt-dir "$ref/ckpt" \
			--out "$ref/params" >"$ref/log" 2>&1 || { tail -n5 "$ref/log" >&2; exit 1; }
		sha256sum <"$ref/params" | cut -d' ' -f1 >"$ref.sha"
	) 9>"$ref.lock" || return 1
	cat "$ref.sha"
}

# ddp_ranks_of JOBID: pids of train_ddp.py processes of that job still alive.
ddp_ranks_of() {
	local p
	for p in $(pgrep -u alice -f idletime/examples/train_ddp.py); do
		tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "SLURM_JOB_ID=$1" && echo "$p"
	done
}

# ddp_diagnose JOBID OUT: where each live rank is stuck (PYTHONFAULTHANDLER in the job script:
# SIGABRT prints every thread's Python stack into the job's output) and who holds its port.
ddp_diagnose() {
	local p
	for p in $(ddp_ranks_of "$1"); do
		echo "rank pid $p: state $(awk '{print $3}' "/proc/$p/stat" 2>/dev/null) wchan $(cat "/proc/$p/wchan" 2>/dev/null)" >&2
		kill -ABRT "$p" 2>/dev/null
	done
	ss -tanp 2>/dev/null | grep -E ":6[1-4][0-9]{3}\b" | head -n 20 >&2
	sleep 2
	tail -n 60 "$2" | sed 's/^/    out| /' >&2
}

ddp_wait_no_ranks() {
	local i
	for ((i = 0; i < 150; i++)); do
		[ -z "$(ddp_ranks_of "$1")" ] && return 0
		sleep 0.2
	done
	echo "ranks of job $1 still running: $(ddp_ranks_of "$1" | tr '\n' ' ')" >&2
	return 1
}

ddp_preempt_test() {
	local name=$1 script=$2 want id out n owner got
	shift 2
	want=$(ddp_reference) || it_fail "uninterrupted 4-rank reference run failed"
	id=$(it_submit alice -J "$name" --idle-resources=only --open-mode=append "$@" \
		"$RC_JOBS/$script" "${DDP_ARGS[@]}" --out "$IC_DIR/out/$name-params") || it_fail "sbatch"
	out=$(rc_out "$name" "$id")
	for ((n = 1; n <= ${DDP_PREEMPTIONS:-3}; n++)); do
		it_wait_state "$id" RUNNING 60 || it_fail "run $n of $id did not start (Reason=$(it_job_field "$id" Reason))"
		rc_wait_count "$out" '^\[0\] (fresh|resumed)' "$n" 120 || { ddp_diagnose "$id" "$out"; it_fail "run $n never started training"; }
		sleep "$(awk -v r="$RANDOM" 'BEGIN { printf "%.2f", 1 + 4 * r / 32767 }')"
		grep -q '^\[0\] done ' "$out" && it_fail "job finished before preemption $n (raise DDP_STEPS)"
		owner=$(it_submit bob -J "$name-owner" --quota=team-b -w a100-1 --gres=gpu:a100:4 "$RC_JOBS/owner.sh" 600) || it_fail "owner sbatch"
		rc_wait_line "$(rc_out "$name-owner" "$owner")" '^started ' 90 || it_fail "owner $owner did not start"
		ddp_owner_latency "$out" "$n" "$(rc_word "$(rc_out "$name-owner" "$owner")" started)"
		it_wait_state "$id" PENDING 60 || it_fail "job $id not requeued after preemption $n"
		ddp_wait_no_ranks "$id" || it_fail "a rank outlived preemption $n"
		rc_wait_count "$out" ' saved [0-9]' 1 5 || true
		scancel "$owner"
		it_wait_state "$owner" "CANCELLED|COMPLETED" 60 || it_fail "owner $owner did not end"
		# No StartTime=now here: idletime-ft-hook lifts Slurm's requeue hold of a preempted job.
	done
	it_wait_state "$id" COMPLETED $((DDP_STEPS / 5 + 180)) || it_fail "job $id is $(it_job_field "$id" JobState) (log: $(tail -n4 "$out" | tr '\n' '|'))"
	ddp_wait_no_ranks "$id" || it_fail "a rank outlived the job"
	got=$(sha256sum <"$IC_DIR/out/$name-params" | cut -d' ' -f1)
	it_assert_eq "$want" "$got" "sha256 of the final parameters (preempted vs uninterrupted)"
	ddp_check_steps "$out"
	it_info "job $id: $(grep -c ' notice ' "$out") rank notices at steps $(grep ' notice ' "$out" | awk '{print $3}' | sort -un | tr '\n' ' ')resumed at $(grep '^\[0\] resumed' "$out" | awk '{print $3}' | tr '\n' ' ')"
}

# ddp_owner_latency OUT N T_OWNER: prints (info, not asserted: timing) the owner's start after
# the first rank's notice of preemption N, and the slowest rank's save.
ddp_owner_latency() {
	local notice save
	notice=$(grep -E '^\[[0-9]+\] notice ' "$1" | sed -n 's/.* at=//p' | sort -n | sed -n "$((4 * $2 - 3))p")
	save=$(grep -E '^\[[0-9]+\] saved [0-9]+ seconds=' "$1" | sed -n 's/.*seconds=//p' | tail -n4 | sort -n | tail -n1)
	[ -n "$notice" ] && [ -n "$3" ] && it_info "preemption $2: owner started $(rc_sub "$3" "$notice") s after the first notice; slowest rank's save ${save:-?} s"
}

# Every preemption: all 4 ranks noticed at one step, saved it, and all 4 resumed from it.
ddp_check_steps() {
	local out=$1 s k
	local -a steps
	read -ra steps <<<"$(grep '^\[0\] notice ' "$out" | awk '{print $3}' | tr '\n' ' ')"
	[ ${#steps[@]} = "${DDP_PREEMPTIONS:-3}" ] || it_fail "rank 0 noticed ${#steps[@]} times: ${steps[*]}"
	for s in "${steps[@]}"; do
		for k in 0 1 2 3; do
			grep -q "^\[$k\] notice $s " "$out" || it_fail "rank $k did not stop at step $s"
			grep -q "^\[$k\] resumed $s\$" "$out" || it_fail "rank $k did not resume from step $s"
		done
	done
}
