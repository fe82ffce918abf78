#!/bin/bash
# Env: RC_JOBS (set by rc_env). The training process is an srun step; the batch shell is `srun` itself (exec).
exec srun --quiet /usr/bin/python3 "${RC_JOBS:?}/notice_probe.py" "$@"
