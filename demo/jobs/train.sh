#!/bin/bash
# Demo training job: deterministic PyTorch training through the idletime checkpoint library.
# exec: the training process is the batch step itself, so the preemption notice reaches it.
# Env: DEMO_STEPS, DEMO_OUT (final parameters), DEMO_TRAIN (path of train_digits.py).
echo "start $(date +%s.%N) restart=${SLURM_RESTART_COUNT:-0} partition=$SLURM_JOB_PARTITION nodes=$SLURM_JOB_NODELIST"
exec /usr/bin/python3 "$DEMO_TRAIN" --steps "$DEMO_STEPS" --ckpt-every 25 --step-sleep 0.1 --out "$DEMO_OUT"
