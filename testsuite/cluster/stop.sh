#!/bin/bash
# Stop the local Slurm cluster: cancel every job, wait for the jobs to end, then stop each daemon
# by the PID in its pid file (SIGTERM, SIGKILL after a timeout). Idempotent.
# Usage: stop.sh [--dir STATEDIR] [--job-timeout SECONDS]
set -euo pipefail
# shellcheck source=common.sh
. "$(dirname "$0")/common.sh"

JOB_TIMEOUT=90
while [ $# -gt 0 ]; do
	case $1 in
	--dir) IC_DIR=${2:?}; shift 2 ;;
	--dir=*) IC_DIR=${1#*=}; shift ;;
	--job-timeout) JOB_TIMEOUT=${2:?}; shift 2 ;;
	*) echo "usage: $0 [--dir STATEDIR] [--job-timeout SECONDS]" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || ic_die "must run as root"
case $IC_DIR in /*) ;; *) IC_DIR=$PWD/$IC_DIR ;; esac
ic_layout
rc=0
ic_state_dir_safe || rc=$?
[ $rc != 3 ] || { ic_log "no state dir $IC_DIR: nothing to stop"; exit 0; }
T0=$(date +%s%N)

no_jobs() { [ -z "$(squeue -h -o %i 2>/dev/null)" ] && squeue -h >/dev/null 2>&1; }

if ic_running slurmctld && ic_ctld_up; then
	if ! no_jobs; then
		ic_log "cancelling $(squeue -h -o %i | wc -l) job(s)"
		squeue -h -o %i | xargs -r scancel --quiet || true
		ic_poll "$JOB_TIMEOUT" no_jobs || ic_log "warning: jobs still present after ${JOB_TIMEOUT}s: $(squeue -h -o '%i %T' | tr '\n' ' ')"
	fi
fi

# shellcheck disable=SC2046 # list of names
ic_stop_daemons 20 $(ic_slurmd_names)
# Job steps outlive slurmd (PPID 1); ours carry this cluster's SLURM_CONF in their environment.
stepds=$(ic_stepd_pids)
if [ -n "$stepds" ]; then
	ic_log "killing leftover slurmstepd: $(echo "$stepds" | tr '\n' ' ')"
	for p in $stepds; do kill -KILL "$p" 2>/dev/null || true; done
fi
ic_stop_daemon slurmctld 30
ic_stop_daemon slurmdbd 20
ic_stop_daemon mariadbd 30
ic_stop_stray_mariadbd
ic_stop_daemon munged 10
ic_log "cluster stopped in $((($(date +%s%N) - T0) / 1000000)) ms"
