# Sourced by bench/jobs/run.sh and bench/exporter/run.sh: fills the local cluster with N held 1-GPU
# jobs of alice named bench-jobs (half in quota-team-a, half idle-time), after raising
# MaxJobCount when it is too low (restarts the cluster), and cancels them on exit.
# Needs: CL (testsuite/cluster), CONFIG, N, BENCH (the caller's name for messages); common.sh sourced.
# Defines median_ms and bench_clean; sets total (jobs in the cluster).

bench_clean() {
	squeue -h -n bench-jobs -o %i | xargs -r scancel
	ic_poll 120 sh -c '[ -z "$(squeue -h -n bench-jobs -o %i)" ]' || true
}

# median_ms CMD...: median wall time of R runs, milliseconds.
median_ms() {
	local i t0 ts=()
	for ((i = 0; i < R; i++)); do
		t0=$(date +%s%N)
		"$@" >/dev/null
		ts+=($((($(date +%s%N) - t0) / 1000000)))
	done
	printf '%s\n' "${ts[@]}" | sort -n | sed -n "$(((R + 1) / 2))p"
}

bench_held_jobs() {
	local max extra have t0 per k
	max=$(scontrol show config | sed -n 's/^MaxJobCount *= *//p')
	if [ "${max:-0}" -lt $((N + 1000)) ]; then
		extra=$IC_ETC/bench-jobs.conf
		echo "MaxJobCount=$((N + 5000))" >"$extra"
		echo "$BENCH: MaxJobCount=$max < N+1000: restarting slurmctld with --extra-conf $extra" >&2
		"$CL/stop.sh" >/dev/null 2>&1 || true
		"$CL/start.sh" --config "$CONFIG" ${IDLETIME_PREFIX:+--prefix "$IDLETIME_PREFIX"} --extra-conf "$extra" >/dev/null
	fi
	have=$(squeue -h -n bench-jobs -o %i | wc -l)
	if [ "$have" -lt "$N" ]; then
		t0=$(date +%s)
		per=$(((N - have + 3) / 4))
		for k in 0 1 2 3; do
			runuser -u alice -- env SLURM_CONF="$SLURM_CONF" per="$per" k="$k" bash -c '
				cd /tmp
				for ((i = 0; i < per; i++)); do
					if (( (i + k) % 2 )); then p=quota-team-a; else p=idle-a100-east,idle-a100-west; fi
					sbatch --hold -J bench-jobs -o /dev/null -p "$p" --gres=gpu:1 --wrap=true >/dev/null || exit 1
				done' &
		done
		wait
		echo "$BENCH: submitted $((N - have)) held jobs in $(($(date +%s) - t0)) s" >&2
	fi
	total=$(squeue -h -o %i | wc -l)
	echo "$BENCH: $total jobs in the cluster" >&2
}
