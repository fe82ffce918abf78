#!/bin/bash
# Env: RC_JOBS (set by rc_env). The training process is a child of the batch shell. The shell must survive the notice signal
# (bash dies of SIGUSR1 by default): a trap keeps it alive; children get the default again.
trap 'echo "shell got the notice"' USR1
/usr/bin/python3 "${RC_JOBS:?}/notice_probe.py" "$@"
