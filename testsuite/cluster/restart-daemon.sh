#!/bin/bash
# Restart one daemon of the local cluster in place: stop it by the PID in its pid file (SIGTERM,
# SIGKILL after 30 s), start it again with the same command line and environment, the way start.sh launches it
# (own session, stdout/stderr appended to log/NAME.out, pid to run/NAME.pid), and wait until it
# answers. Jobs keep running (slurmd and slurmstepd are not touched when NAME is slurmctld).
# Usage: restart-daemon.sh [--dir STATEDIR] NAME      NAME: slurmctld | slurmd-<node>
# Env: IDLETIME_CLUSTER_DIR (state dir). Exit 0 restarted, 1 failed, 2 bad usage.
set -euo pipefail
# shellcheck source=common.sh
. "$(dirname "$0")/common.sh"

usage() {
	echo "usage: $0 [--dir STATEDIR] slurmctld|slurmd-<node>" >&2
	exit 2
}
NAME=
while [ $# -gt 0 ]; do
	case $1 in
	--dir) IC_DIR=${2:?}; shift 2 ;;
	--dir=*) IC_DIR=${1#*=}; shift ;;
	slurmctld | slurmd-*) [ -z "$NAME" ] || usage; NAME=$1; shift ;;
	*) echo "idletime/cluster: unknown argument '$1' (allowed: --dir, slurmctld, slurmd-<node>)" >&2; usage ;;
	esac
done
[ -n "$NAME" ] || usage
[ "$(id -u)" = 0 ] || ic_die "must run as root"
ic_layout
ic_state_dir_safe || ic_die "no state dir $IC_DIR"
pid=$(ic_pid "$NAME") || ic_die "$NAME is not running (no live pid in $IC_RUN/$NAME.pid)"
# Its command line and environment are run again as root: only those of root's process running
# this cluster's binary (a PID reused by a user's process named like it is not the daemon).
bin=slurmd
[ "$NAME" != slurmctld ] || bin=slurmctld
[ "$(stat -c %u "/proc/$pid" 2>/dev/null)" = 0 ] && [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$(readlink -f "$IC_BIN/$bin")" ] ||
	ic_die "pid $pid of $IC_RUN/$NAME.pid is not root's $(readlink -f "$IC_BIN/$bin"): not restarting it"
# The command line and the environment start.sh gave it (NUL-separated in /proc), reused as they
# are: slurmctld's plugins read IDLETIME_CONFIG from its environment, and one restarted without it
# ran preempt/idletime with no config (like partition_prio).
mapfile -d '' -t cmd <"/proc/$pid/cmdline"
mapfile -d '' -t envv <"/proc/$pid/environ"
[ ${#cmd[@]} -gt 0 ] || ic_die "cannot read the command line of $NAME (pid $pid)"
T0=$(date +%s%N)
ic_stop_daemon "$NAME" 30
setsid env -i -- "${envv[@]}" "${cmd[@]}" </dev/null >>"$IC_LOGD/$NAME.out" 2>&1 &
echo $! >"$IC_RUN/$NAME.pid"
case $NAME in
slurmctld) ready() { ic_running slurmctld && ic_ctld_up; } ;;
*) ready() { ic_running "$NAME" && [ -n "$(sinfo -h -n "${NAME#slurmd-}" -o %T 2>/dev/null | grep -vE 'down|unk|not_resp')" ]; } ;;
esac
if ! ic_poll 30 ready; then
	ic_log "$NAME did not come back within 30 s"
	ic_log_tail "$NAME"
	exit 1
fi
ic_log "$NAME restarted (old pid $pid, new pid $(cat "$IC_RUN/$NAME.pid")) in $((($(date +%s%N) - T0) / 1000000)) ms"
