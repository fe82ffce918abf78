#!/bin/bash
# Demo guaranteed job of the owning team: prints when it started, holds its GPUs a while.
echo "start $(date +%s.%N) partition=$SLURM_JOB_PARTITION nodes=$SLURM_JOB_NODELIST"
sleep "${DEMO_HOLD:-30}"
echo "end $(date +%s.%N)"
