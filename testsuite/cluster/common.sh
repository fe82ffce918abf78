# shellcheck shell=bash
# Shared by start.sh, stop.sh, status.sh and lib.sh: state-dir layout, ports, pid files, polling.
# Sourced, never run. Everything is derived from IC_DIR (the state dir).

# shellcheck disable=SC2034 # the variables below are used by the scripts that source this file
IC_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
IC_DIR=${IC_DIR:-${IDLETIME_CLUSTER_DIR:-/var/tmp/idletime-cluster}}
IC_PORT_BASE=${IDLETIME_CLUSTER_PORT_BASE:-16800}
IC_CLUSTER=${IDLETIME_CLUSTER_NAME:-idletime}

# Daemons in start order; slurmd instances are "slurmd-<node>".
IC_CORE_DAEMONS="munged mariadbd slurmdbd slurmctld"

ic_log() { printf 'idletime/cluster: %s\n' "$*" >&2; }
ic_die() { ic_log "error: $*"; exit 1; }

# Recompute every path from IC_DIR (call again after --dir changed it).
ic_layout() {
	IC_ETC=$IC_DIR/etc
	IC_RUN=$IC_DIR/run
	IC_LOGD=$IC_DIR/log
	IC_BIN=$IC_DIR/bin
	IC_SPOOL=$IC_DIR/spool
	IC_GPU=$IC_DIR/gpu
	IC_MUNGE=$IC_DIR/munge
	IC_MYSQL=$IC_DIR/mysql
	IC_SOCK=$IC_MUNGE/munge.socket.2
	IC_MYSQL_SOCK=$IC_MYSQL/mysqld.sock
	IC_CONF=$IC_ETC/slurm.conf
	IC_PORT_MYSQL=$((IC_PORT_BASE + 6))
	IC_PORT_CTLD=$((IC_PORT_BASE + 17))
	IC_PORT_DBD=$((IC_PORT_BASE + 19))
	IC_PORT_SLURMD0=$((IC_PORT_BASE + 100))
	export SLURM_CONF=$IC_CONF
	# The Slurm this state dir runs (start.sh --slurm): its commands come first in PATH.
	# Only a record this user wrote (a /var/tmp state dir could be planted by anyone).
	if [ -s "$IC_ETC/slurm-prefix" ]; then
		[ ! -L "$IC_ETC/slurm-prefix" ] && [ "$(stat -c %u "$IC_ETC/slurm-prefix")" = "$(id -u)" ] ||
			ic_die "$IC_ETC/slurm-prefix is not a file of uid $(id -u): refusing to run the Slurm it names"
		ic_slurm_use "$(cat "$IC_ETC/slurm-prefix")"
	fi
}

# ---- which Slurm ------------------------------------------------------------------------------
# ic_slurm_use PREFIX: run Slurm from PREFIX (scripts/get-slurm.sh builds one into
# /opt/slurm/<version>); /usr is Debian's packages. Sets IC_SLURM, IC_SLURM_PLUGINS (Slurm's own
# plugin dir), IC_SLURM_PATH (a PATH prefix, "" for /usr) and puts PREFIX/bin first in PATH.
IC_SLURM=/usr IC_SLURM_PLUGINS=/usr/lib/x86_64-linux-gnu/slurm-wlm IC_SLURM_PATH=
ic_slurm_use() {
	# The real path: /opt/slurm/24.11 is a link to the release it was last built as (24.11.5).
	IC_SLURM=$(readlink -f "${1:-/usr}" 2>/dev/null || echo "${1%/}")
	if [ "$IC_SLURM" = /usr ] || [ -z "$IC_SLURM" ]; then
		IC_SLURM=/usr IC_SLURM_PLUGINS=/usr/lib/x86_64-linux-gnu/slurm-wlm IC_SLURM_PATH=
		return 0
	fi
	[ -x "$IC_SLURM/sbin/slurmctld" ] && [ -x "$IC_SLURM/bin/sbatch" ] ||
		ic_die "--slurm $IC_SLURM: no sbin/slurmctld and bin/sbatch there (scripts/get-slurm.sh SERIES builds one)"
	# Root starts these daemons: they must be root's own files.
	[ "$(id -u)" != 0 ] || [ "$(stat -c %u "$IC_SLURM/sbin/slurmctld")" = 0 ] ||
		ic_die "--slurm $IC_SLURM: sbin/slurmctld is not owned by root: refusing to start it as root"
	IC_SLURM_PLUGINS=$IC_SLURM/lib/slurm
	IC_SLURM_PATH=$IC_SLURM/bin:
	case ":$PATH:" in *":$IC_SLURM/bin:"*) ;; *) PATH=$IC_SLURM/bin:$PATH ;; esac
	export PATH
}
# ic_slurm_sbin DAEMON: the daemon's binary (Debian names slurmctld, slurmd, slurmstepd *-wlm).
ic_slurm_sbin() {
	if [ "$IC_SLURM" = /usr ] && [ "$1" != slurmdbd ]; then echo "/usr/sbin/$1-wlm"; else echo "$IC_SLURM/sbin/$1"; fi
}
ic_layout

# ic_state_dir_safe: the state dir holds what root runs and signals (links to the daemons, pid
# files, slurm.conf, the tests' stand-ins): refuse one a local user could have made first (a
# /var/tmp path can be created by anyone) or can change. The state dir must be a directory of
# root's that only root may write, holding no symlink in place of one of its directories, under a
# parent of root's that only root may write or that is sticky (/var/tmp), named without '.', '..'
# or '//' (trailing '/' dropped). Returns 3 when it does not exist: start.sh creates it first and
# checks after (a directory planted between a check and its creation would be used); stop.sh then
# has nothing to stop.
ic_state_dir_safe() {
	local p st sub d=$IC_DIR
	while [ "$d" != / ] && [ "${d%/}" != "$d" ]; do d=${d%/}; done
	case $d/ in
	/*/ ) ;;
	*) ic_die "state dir '$IC_DIR': give an absolute path" ;;
	esac
	case $d/ in */./* | */../* | *//*) ic_die "state dir $IC_DIR: give a path without '.', '..' or '//'" ;; esac
	if [ "$d" != "$IC_DIR" ]; then IC_DIR=$d; ic_layout; fi
	p=$(dirname "$IC_DIR")
	st=$(stat -c '%u %A' "$p" 2>/dev/null) || ic_die "state dir $IC_DIR: no parent directory $p"
	[ ! -L "$p" ] || st="symlink"
	case $st in
	"0 d"????[!w]??[!w]? | "0 d"????????[tT]) ;;
	*) ic_die "state dir $IC_DIR: its parent $p must be root's and writable by root only, or sticky ($st)" ;;
	esac
	[ -e "$IC_DIR" ] || [ -L "$IC_DIR" ] || return 3
	[ ! -L "$IC_DIR" ] || ic_die "state dir $IC_DIR is a symlink: refusing it"
	st=$(stat -c '%u %A' "$IC_DIR")
	case $st in
	"0 d"????[!w]??[!w]*) ;;
	*) ic_die "state dir $IC_DIR must be a directory of root's that only root may write ($st): another user may have made it; remove it or use another --dir" ;;
	esac
	for sub in etc run log bin spool gpu out munge mysql; do
		[ ! -L "$IC_DIR/$sub" ] || ic_die "state dir $IC_DIR: $sub is a symlink: refusing it"
	done
}

# Expected /proc/PID/comm of a daemon name ("slurmd-a100-1" -> "slurmd").
ic_comm() {
	case $1 in
	slurmd-*) echo slurmd ;;
	*) echo "$1" ;;
	esac
}

# PID of a running daemon from its pid file, or nothing (guards against pid reuse via comm).
ic_pid() {
	local f=$IC_RUN/$1.pid pid comm
	[ -s "$f" ] || return 1
	pid=$(head -n1 "$f" 2>/dev/null) || return 1
	case $pid in '' | *[!0-9]*) return 1 ;; esac
	comm=$(cat "/proc/$pid/comm" 2>/dev/null) || return 1
	[ "$comm" = "$(ic_comm "$1")" ] || return 1
	! ic_gone "$pid" || return 1
	echo "$pid"
}

ic_running() { ic_pid "$1" >/dev/null; }

# ic_launch NAME CMD...: start CMD in its own session, stdout/stderr to log/NAME.out, pid to run/NAME.pid.
ic_launch() {
	local name=$1
	shift
	setsid "$@" </dev/null >>"$IC_LOGD/$name.out" 2>&1 &
	echo $! >"$IC_RUN/$name.pid"
}

# The PID in NAME's pid file (ic_launch's, or an earlier start's: start_slurm also waits for a
# slurmctld already running) while that process lives, whatever it is named yet.
ic_launched_alive() {
	local pid
	pid=$(head -n1 "$IC_RUN/$1.pid" 2>/dev/null) || return 1
	case $pid in '' | *[!0-9]*) return 1 ;; esac
	! ic_gone "$pid"
}

# ic_stat_field PID N: field N of /proc/PID/stat as proc(5) numbers them (3 state, 4 ppid, 5 pgrp),
# read after the last ')' (the command name in field 2 may hold spaces and parentheses).
ic_stat_field() {
	local st n=$2
	[ "$n" -ge 3 ] 2>/dev/null || return 1
	st=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	st=${st##*) }
	# shellcheck disable=SC2086 # split into fields on purpose
	set -- $st
	shift $((n - 3)) 2>/dev/null || return 1
	echo "$1"
}

# ic_ready_or_dead NAME CHECK...: 0 when CHECK succeeds or the launched process is gone (no need to
# wait on). Until setsid (and env) have exec'd the daemon, its /proc comm is not NAME's yet: that
# process is starting, not dead. (Taking it for dead, by ic_running's comm check, failed CI starts
# under load: ic_await reported "munged exited during start" of a munged that was coming up, and
# once returned before mariadbd had made its socket, so the SQL after it found none.)
ic_ready_or_dead() {
	local name=$1
	shift
	! ic_launched_alive "$name" || "$@"
}

# ic_await NAME TIMEOUT CHECK...: poll CHECK; when the daemon exits or times out fail with its log tail.
ic_await() {
	local name=$1 timeout=$2
	shift 2
	local ready=0
	ic_poll "$timeout" ic_ready_or_dead "$name" "$@" && ready=1
	if ! ic_launched_alive "$name"; then
		ic_log "$name exited during start"
	elif [ $ready = 0 ]; then
		ic_log "$name did not become ready within ${timeout}s"
	elif ic_running "$name"; then
		return 0
	else
		ic_log "$name answers, but its process $(head -n1 "$IC_RUN/$name.pid") is not named $(ic_comm "$name")"
	fi
	ic_log_tail "$name"
	exit 1
}

# Names of slurmd instances that have pid files (running or not).
ic_slurmd_names() {
	local f
	for f in "$IC_RUN"/slurmd-*.pid; do
		[ -e "$f" ] || continue
		f=${f##*/}
		echo "${f%.pid}"
	done
}

# Poll CMD every 0.1 s until it succeeds or TIMEOUT seconds passed. Returns CMD's last status.
ic_poll() {
	local timeout=$1 deadline
	shift
	deadline=$(($(date +%s%N) + timeout * 1000000000))
	until "$@"; do
		[ "$(date +%s%N)" -lt "$deadline" ] || return 1
		sleep 0.1
	done
}

# Log file of a daemon name.
ic_logfile() { echo "$IC_LOGD/$1.log"; }

# Print the last lines of a daemon's log (or of its captured stdout/stderr) to stderr.
ic_log_tail() {
	local f=$IC_LOGD/$1.log
	[ -s "$f" ] || f=$IC_LOGD/$1.out
	[ -s "$f" ] || { ic_log "no log in $IC_LOGD/$1.log or .out"; return 0; }
	ic_log "---- last lines of $f ----"
	tail -n "${2:-25}" "$f" >&2
}

# ic_stop_daemons TIMEOUT NAME...: stop daemons by PID, in parallel: SIGTERM to all, SIGKILL to
# those still alive after TIMEOUT seconds. Removes their pid files.
ic_stop_daemons() {
	local timeout=$1 name pid pids=() left
	shift
	for name in "$@"; do
		if pid=$(ic_pid "$name"); then
			kill -TERM "$pid" 2>/dev/null || true
			pids+=("$pid")
		fi
	done
	if [ ${#pids[@]} -gt 0 ] && ! ic_poll "$timeout" ic_all_gone "${pids[@]}"; then
		left=$(for pid in "${pids[@]}"; do ic_gone "$pid" || echo "$pid($(cat "/proc/$pid/comm" 2>/dev/null))"; done)
		ic_log "still alive ${timeout}s after SIGTERM, SIGKILL: $(echo "$left" | tr '\n' ' ')"
		for pid in "${pids[@]}"; do ic_gone "$pid" || kill -KILL "$pid" 2>/dev/null || true; done
		ic_poll 5 ic_all_gone "${pids[@]}" || ic_log "warning: still alive after SIGKILL: ${pids[*]}"
	fi
	for name in "$@"; do rm -f "$IC_RUN/$name.pid"; done
}
ic_stop_daemon() { ic_stop_daemons "${2:-20}" "$1"; }

# This cluster's MariaDB servers that its pid file in IC_RUN does not name (seen once: a failed
# start attempt left a mariadbd behind that later held the port of another cluster): every
# mariadbd whose command line names this cluster's data directory.
ic_stray_mariadbd() {
	local named
	named=$(ic_pid mariadbd) || named=
	ic_procs_where mariadbd _ic_is_stray_mariadbd "$named"
}
_ic_is_stray_mariadbd() {  # NAMED PID: not the PID the pid file names, run as mysql, on our data
	[ "$2" != "$1" ] && [ "$(stat -c %U "/proc/$2" 2>/dev/null)" = mysql ] &&
		ic_proc_has cmdline "--datadir=$IC_MYSQL/data" "$2"
}

# Stops them (SIGTERM, SIGKILL after 30 s) and says so.
ic_stop_stray_mariadbd() {
	local stray p
	stray=$(ic_stray_mariadbd)
	[ -n "$stray" ] || return 0
	ic_log "stopping a mariadbd of this cluster that no pid file names: $(echo "$stray" | tr '\n' ' ')"
	for p in $stray; do kill -TERM "$p" 2>/dev/null || true; done
	# shellcheck disable=SC2086 # list of PIDs
	ic_poll 30 ic_all_gone $stray && return 0
	# Those still there, looked up again (a PID of the first look may belong to another process now).
	stray=$(ic_stray_mariadbd)
	for p in $stray; do kill -KILL "$p" 2>/dev/null || true; done
	# shellcheck disable=SC2086 # list of PIDs
	[ -z "$stray" ] || ic_poll 5 ic_all_gone $stray || ic_log "warning: still alive after SIGKILL: $stray"
}

ic_all_gone() {
	local p
	for p in "$@"; do ic_gone "$p" || return 1; done
}

ic_gone() { ! kill -0 "$1" 2>/dev/null || [ "$(ic_stat_field "$1" 3)" = Z ]; }

# slurmstepd processes of this cluster: root's, identified by SLURM_CONF in their environment.
ic_stepd_pids() { ic_procs_where slurmstepd _ic_is_our_stepd; }
_ic_is_our_stepd() { [ "$(stat -c %u "/proc/$1" 2>/dev/null)" = 0 ] && ic_proc_has environ "SLURM_CONF=$IC_CONF" "$1"; }

# ic_procs_where COMM TEST ARG...: the PIDs of the processes named COMM (/proc/PID/comm) for which
# TEST ARG... PID succeeds (the PID comes last).
ic_procs_where() {
	local comm=$1 p
	shift
	for p in /proc/[0-9]*; do
		[ "$(cat "$p/comm" 2>/dev/null)" = "$comm" ] || continue
		"$@" "${p#/proc/}" || continue
		echo "${p#/proc/}"
	done
}

# ic_proc_has FILE ENTRY PID: /proc/PID/FILE (cmdline, environ: NUL-separated) has the entry ENTRY.
# grep reads to the end (no -q): under pipefail, tr killed by SIGPIPE would read as no match.
ic_proc_has() { { tr '\0' '\n' <"/proc/$3/$1"; } 2>/dev/null | grep -xF -- "$2" >/dev/null; }

# Slurm answers (slurmctld up and responding)?
ic_ctld_up() { scontrol ping 2>/dev/null | grep -q 'is UP'; }
