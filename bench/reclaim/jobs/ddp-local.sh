#!/bin/bash
# Starts DDP_RANKS (default 4) ranks of the installed train_ddp.py on this node the way torchrun
# does (env RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT); args pass through. Usable as
# a batch script and outside Slurm. The shell survives the notice (a trap, not inherited by the
# ranks) and passes it on to every rank, for sites whose notice reaches only the batch shell
# (one rank getting it is enough: the ranks agree); it waits for every rank and exits with the
# highest status.
# Env (set by rc_env): PYTHONPATH points at the installed idletime package.
# MASTER_PORT default: 61000-64999, above the kernel's ephemeral range (32768-60999), so no
# client socket of this busy host (Slurm RPCs) can hold it; per job and run, so the test
# clusters that share this host rarely meet.
n=${DDP_RANKS:-4}
export MASTER_ADDR=${MASTER_ADDR:-127.0.0.1} WORLD_SIZE=$n
export MASTER_PORT=${MASTER_PORT:-$((61000 + (${SLURM_JOB_ID:-$$} * 7 + ${SLURM_RESTART_COUNT:-0}) % 4000))}
export PYTHONFAULTHANDLER=1 # a SIGABRT prints every thread's stack (test diagnostics)
pids=()
trap 'echo "batch shell: notice"; kill -USR1 "${pids[@]}" 2>/dev/null' USR1
trap 'echo "batch shell: SIGTERM"' TERM
for ((r = 0; r < n; r++)); do
	RANK=$r LOCAL_RANK=$r /usr/bin/python3 "${PYTHONPATH%%:*}/idletime/examples/train_ddp.py" "$@" &
	pids+=($!)
done
rc=0
for p in "${pids[@]}"; do
	while :; do
		wait "$p"
		s=$?
		# wait returns > 128 when a trapped signal interrupts it: the rank may still run
		[ $s -gt 128 ] && kill -0 "$p" 2>/dev/null && continue
		break
	done
	[ $s -gt $rc ] && rc=$s
done
exit $rc
