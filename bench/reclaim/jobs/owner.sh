#!/bin/bash
# Guaranteed (owner) job: prints its start time (epoch seconds), then sleeps SECONDS (default 600).
echo "started $(date +%s.%N)"
exec sleep "${1:-600}"
