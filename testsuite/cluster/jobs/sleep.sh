#!/bin/bash
# Test job: sleeps SECONDS (default 600); the batch shell is the sleep, so signals reach it directly.
exec sleep "${1:-600}"
