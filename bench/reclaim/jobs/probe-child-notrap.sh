#!/bin/bash
# Env: RC_JOBS (set by rc_env). The training process is a child of a batch shell that does not handle the notice signal.
/usr/bin/python3 "${RC_JOBS:?}/notice_probe.py" "$@"
echo "shell: python exited $?"
