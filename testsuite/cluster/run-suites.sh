#!/bin/bash
# Runs every cluster test (t-*.sh), each on a cluster configured the way the test needs, with
# independent clusters in parallel to keep the whole run short.
#   A test names its cluster in a header line:  # cluster-args: --config FILE --extra-conf FILE
#   (paths relative to the repository top). Tests without one share the default cluster, which
#   is split into SHARDS instances (default 2). Every instance has its own state dir
#   (/var/tmp/idletime-ci-N) and ports (base IDLETIME_CI_PORT_BASE + 1000 N, default 16800), and is
#   stopped afterwards.
# Usage: run-suites.sh [PATTERN...]    Env: SHARDS, IT_TEST_TIMEOUT, IDLETIME_CI_PORT_BASE, IDLETIME_SLURM (a Slurm prefix:
# start.sh --slurm), IDLETIME_CI_DIR (state dir stem, default /var/tmp/idletime-ci; one per Slurm).
# Exit 1 if any test failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
shards=${SHARDS:-2}
port0=${IDLETIME_CI_PORT_BASE:-16800}
slurm_args=${IDLETIME_SLURM:+ --slurm $IDLETIME_SLURM}

declare -A group_tests=()
declare -a group_keys=()
add() {  # add KEY TESTNAME
	[ -n "${group_tests[$1]+x}" ] || group_keys+=("$1")
	group_tests[$1]="${group_tests[$1]:-} $2"
}
n=0
for t in "$here"/t-*.sh; do
	name=$(basename "${t%.sh}")
	if [ $# -gt 0 ]; then
		m=0
		for p in "$@"; do [[ $name == *"$p"* ]] && m=1; done
		[ $m = 1 ] || continue
	fi
	args=$(sed -n 's/^# cluster-args: *//p' "$t" | head -n1)
	if [ -z "$args" ]; then
		add "default:$((n % shards))" "$name"
		n=$((n + 1))
	else
		add "args:$args" "$name"
	fi
done
[ ${#group_keys[@]} -gt 0 ] || { echo "run-suites: no test matches: $*" >&2; exit 1; }

logs=$(mktemp -d /tmp/idletime-suites.XXXXXX)
pids=() logf=()
i=0
for key in "${group_keys[@]}"; do
	i=$((i + 1))
	args=""
	[[ $key == args:* ]] && args=${key#args:}
	# Relative paths in the header are relative to the repository top.
	abs_args=""
	for w in $args; do
		case $w in -*) abs_args+=" $w" ;; /*) abs_args+=" $w" ;; *) abs_args+=" $top/$w" ;; esac
	done
	dir=${IDLETIME_CI_DIR:-/var/tmp/idletime-ci}-$i
	# A run that was killed can leave daemons behind (run-tests.sh cancels the jobs it left). stop.sh
	# runs as root on what the dir holds: only on a dir of root's that no one else may write (a
	# /var/tmp path could have been created first by anyone, with a planted slurm.conf and pid file).
	if [ -e "$dir" ] || [ -L "$dir" ]; then
		own=$(stat -c '%u %A' "$dir")
		case $own in
		"0 d"????[!w]??[!w]*) [ -L "$dir" ] || "$here/stop.sh" --dir "$dir" >/dev/null 2>&1 || true ;;
		*) echo "run-suites: $dir must be a directory of root's that only root may write ($own): not used"; rc_dir=1; continue ;;
		esac
		[ ! -L "$dir" ] || { echo "run-suites: $dir is a symlink: not used"; rc_dir=1; continue; }
	fi
	# Clusters start one at a time (a start is CPU-heavy on 2 cores); the tests then run in parallel.
	# A start competes with the tests of the clusters started before it: on a fresh machine (every
	# MariaDB initialised at once) munged or mariadbd once missed their readiness wait and the
	# cluster's tests never ran (CI, 2026-12-06). So a failed start is stopped and tried again.
	for attempt in 1 2 3; do
		# shellcheck disable=SC2086 # word list on purpose
		IDLETIME_CLUSTER_DIR=$dir IDLETIME_CLUSTER_PORT_BASE=$((port0 + 1000 * i)) \
			"$here/start.sh" --dir "$dir"$slurm_args$abs_args >"$logs/$i.start" 2>&1 && break
		echo "run-suites: cluster $i did not start (attempt $attempt of 3):"
		tail -n 20 "$logs/$i.start"
		IDLETIME_CLUSTER_DIR=$dir "$here/stop.sh" --dir "$dir" >/dev/null 2>&1 || true
		sleep 5
	done
	(
		export IDLETIME_CLUSTER_DIR=$dir IDLETIME_CLUSTER_PORT_BASE=$((port0 + 1000 * i))
		echo "run-suites: cluster $i (${args:-default}):${group_tests[$key]}"
		# shellcheck disable=SC2086 # word lists on purpose
		START_ARGS="--dir $dir$slurm_args$abs_args" "$here/run-tests.sh" ${group_tests[$key]}
		rc=$?
		"$here/stop.sh" --dir "$dir" >/dev/null 2>&1
		exit $rc
	) >"$logs/$i.log" 2>&1 &
	pids+=($!)
	logf+=("$logs/$i.log")
done
rc=${rc_dir:-0}
for j in "${!pids[@]}"; do
	wait "${pids[$j]}" || rc=1
	cat "${logf[$j]}"
done
grep -h '^run-tests: ' "$logs"/*.log
rm -rf "$logs"
[ $rc = 0 ] && echo "run-suites: all cluster tests passed" || echo "run-suites: some cluster tests FAILED"
exit $rc
