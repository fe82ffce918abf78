#!/bin/bash
# Runs the installed train_digits.py example as the batch script itself (exec); args pass through.
# Env (set by rc_env): PYTHONPATH points at the installed idletime package.
exec /usr/bin/python3 "${PYTHONPATH%%:*}/idletime/examples/train_digits.py" "$@"
