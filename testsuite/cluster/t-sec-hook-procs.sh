#!/bin/bash
# cluster-args: --config testsuite/sec/long-backoff.json
# timeout: 600
# The ft hook keeps a bounded number of processes on the slurmctld host whatever users submit
# (issue 11 item 7). A 200-task array whose tasks all exit 137 (retryable) is requeued task by
# task with a 900 s backoff (testsuite/sec/long-backoff.json). Before the fix every requeued task
# left one hook process sleeping until its BeginTime: 200 sleepers. Now the wake-ups are entries
# in one spool directory served by a single hook process. `ps` is sampled every 0.5 s throughout:
# the hook processes of this cluster never exceed IT_HOOK_CAP (default 40, the in-flight epilogs
# of the 16 tasks that run at once), and once every task waits for its BeginTime at most one
# (the waker) is left, with one spool entry per task.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=ft-lib.sh
. "$IC_SRC/ft-lib.sh"
it_begin
ft_require_hook
N=${IT_HOOK_TASKS:-200} CAP=${IT_HOOK_CAP:-40}
SPOOL=$IC_SPOOL/ft-hook-wake
CONFIG=$(sed -n 's/^exec [^ ]* --config \([^ ]*\) .*/\1/p' "$FT_HOOK_WRAPPER")
jq -e '.fault_tolerance.backoff_initial == 900' "$CONFIG" >/dev/null ||
	it_fail "needs the cluster started with --config testsuite/sec/long-backoff.json (hook config: $CONFIG)"
# Hook processes of this cluster only (other clusters on this machine run their own).
hooks() { pgrep -f -- "idletime-ft-hook .*--log $FT_LOG" | wc -l; }
waker_pids() { pgrep -f -- "idletime-ft-hook .*--log $FT_LOG" || true; }
cleanup() {
	it_cleanup_jobs
	# The waker would wait for the cancelled tasks' 900 s backoff: stop this cluster's, by PID.
	local p
	for p in $(waker_pids); do kill "$p" 2>/dev/null || true; done
	rm -f "$SPOOL"/[0-9]*
}
trap cleanup EXIT

id=$(it_submit erin -J sec-procs -p quota-team-cpu -n1 -t 5 --array=1-"$N" --max-restarts=3 \
	"$IT_JOBS_DIR/ft-job.sh" exit 137) || it_fail "sbatch of the array"
max=0 samples=0 waiting=0
deadline=$(($(date +%s) + 420))
while [ "$(date +%s)" -lt "$deadline" ]; do
	n=$(hooks)
	samples=$((samples + 1))
	[ "$n" -gt "$max" ] && max=$n
	[ "$n" -le "$CAP" ] || it_fail "$n hook processes at once (cap $CAP): $(pgrep -af -- "--log $FT_LOG" | head -5)"
	if [ $((samples % 4)) = 0 ]; then
		waiting=$(squeue -h -r -j "$id" -t PENDING -o '%r' | grep -c '^BeginTime$' || true)
		[ "$waiting" -ge "$N" ] && break
	fi
	sleep 0.5
done
[ "$waiting" -ge "$N" ] || it_fail "only $waiting of $N tasks requeued with a backoff in time (max $max hooks)"
sleep 5 # the last requeues' background parts finish
n=$(hooks)
it_info "$N tasks in backoff; hook processes: max $max over $samples samples, now $n; spool entries $(ls "$SPOOL" | grep -c '^[0-9]*$')"
[ "$n" -le 1 ] || it_fail "$n hook processes left while $N tasks wait out their backoff (want <= 1, the waker)"
entries=$(ls "$SPOOL" | grep -c '^[0-9]*$' || true)
[ "$entries" -ge "$N" ] || it_fail "only $entries wake-up entries in $SPOOL for $N tasks in backoff"
it_pass
