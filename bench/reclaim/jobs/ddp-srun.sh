#!/bin/bash
# Runs the installed train_ddp.py as one srun step over every task of the job (srun's
# SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID become RANK/WORLD_SIZE/LOCAL_RANK); args pass through.
# MASTER_ADDR: env, else the job's first node. The batch shell survives the notice (trap); srun
# forwards it to every task.
# Env (set by rc_env): PYTHONPATH points at the installed idletime package.
# MASTER_PORT default: 61000-64999, above the kernel's ephemeral range (32768-60999), so no
# client socket of this busy host (Slurm RPCs) can hold it; per job and run, so the test
# clusters that share this host rarely meet.
MASTER_ADDR=${MASTER_ADDR:-$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)}
export MASTER_ADDR MASTER_PORT=${MASTER_PORT:-$((61000 + (SLURM_JOB_ID * 7 + ${SLURM_RESTART_COUNT:-0}) % 4000))}
trap 'echo "batch shell: notice"' USR1 TERM
srun --quiet /usr/bin/python3 "${PYTHONPATH%%:*}/idletime/examples/train_ddp.py" "$@"
