#!/bin/bash
# Env: RC_JOBS (set by rc_env). The training process is the batch script itself (exec).
exec /usr/bin/python3 "${RC_JOBS:?}/notice_probe.py" "$@"
