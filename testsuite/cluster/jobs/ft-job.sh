#!/bin/bash
# Worker for the t-ft-* tests. Prints "run <restart count> <mode> <unix time>" first, then:
#   exit CODE             exits CODE
#   msg CODE TEXT         prints TEXT, exits CODE
#   hang                  silent forever (no output, no heartbeat)
#   slow SECONDS EVERY    silent on stdout, heartbeat every EVERY s, exits 0 after SECONDS
#   sleep SECONDS         sleeps, exits 0
#   worker SECONDS        async/sync worker: prints "worker <index> start <time> pid <pid> step
#                         <step id>", sleeps, exits 0
#   plan ACTION...        run r does ACTION number r (the last one for later runs):
#                         exit:N (exits N), wait (traps the preemption notice USR1, waits until
#                         SIGTERM, exits 143), ok (exits 0), release:MB (bench/reclaim's
#                         notice_probe.py: on the notice saves MB MiB and calls release())
set -u
mode=$1
shift
echo "run ${SLURM_RESTART_COUNT:-0} $mode $(date +%s)"
case $mode in
exit) exit "$1" ;;
msg) echo "$2"; exit "$1" ;;
hang) exec sleep 100000 ;;
slow)
	end=$(($(date +%s) + $1)); step=0
	while [ "$(date +%s)" -lt "$end" ]; do
		step=$((step + 1))
		echo "$step $(date +%s) 0" >"$IDLETIME_HEARTBEAT_FILE.tmp" && mv "$IDLETIME_HEARTBEAT_FILE.tmp" "$IDLETIME_HEARTBEAT_FILE"
		sleep "$2"
	done
	echo "slow done after $step heartbeats" ;;
sleep) sleep "$1" ;;
worker)
	echo "worker ${IDLETIME_WORKER_INDEX:-?} start $(date +%s) pid $$ step ${SLURM_STEP_ID:-?}"
	# proctrack/linuxproc may deliver a step's SIGKILL to the sleep before (or without) the
	# shell: a worker whose sleep was killed is a killed worker, never a finished one.
	sleep "$1" || exit $?
	echo "worker ${IDLETIME_WORKER_INDEX:-?} done" ;;
plan)
	r=${SLURM_RESTART_COUNT:-0}
	[ "$r" -lt $# ] && act=${*:r+1:1} || act=${*: -1}
	echo "plan run $r: $act"
	case $act in
	exit:*) exit "${act#exit:}" ;;
	ok) exit 0 ;;
	release:*) exec /usr/bin/python3 "${RC_JOBS:?}/notice_probe.py" --on-notice release --save-mb "${act#release:}" ;;
	wait)
		trap 'echo "notice $(date +%s)"' USR1
		trap 'echo "term $(date +%s)"; exit 143' TERM
		while :; do sleep 1; done ;;
	*) echo "ft-job.sh: unknown plan action $act" >&2; exit 2 ;;
	esac ;;
*) echo "ft-job.sh: unknown mode $mode" >&2; exit 2 ;;
esac
