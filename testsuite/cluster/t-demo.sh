#!/bin/bash
# cluster-args: --config etc/demo.json
# The demo scenario (demo/run.sh) as a test: two teams sharing one A100 pool, borrowing, reclaim
# with fast release, resume bitwise equal to an uninterrupted run, a retryable failure restarted.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
it_begin
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$(PREFIX=${IDLETIME_PREFIX:-/usr/local} DEMO_OWNER_WAIT_MAX=${DEMO_OWNER_WAIT_MAX:-30} DEMO_CONFIG="$top/etc/demo.json" \
	DEMO_OUT_DIR="$IC_DIR/demo-out" "$top/demo/run.sh" 2>&1)
rc=$?
printf '%s\n' "$out" | grep -E 'ok:|FAILED|owner wait|GPU-seconds|preempted job' >&2
[ $rc = 0 ] || it_fail "demo/run.sh exited $rc: $(printf '%s\n' "$out" | grep FAILED | head -3 | tr '\n' ';')"
it_pass
