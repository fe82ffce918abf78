#!/bin/bash
# Demo job with a retryable failure: the first run is killed by SIGKILL (exit 137), the restart succeeds.
echo "start $(date +%s.%N) restart=${SLURM_RESTART_COUNT:-0}"
if [ "${SLURM_RESTART_COUNT:-0}" = 0 ]; then
    echo "simulating a lost worker (SIGKILL)"
    kill -KILL $$
fi
echo "finished on restart ${SLURM_RESTART_COUNT}"
