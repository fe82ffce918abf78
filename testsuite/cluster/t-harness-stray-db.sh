#!/bin/bash
# The test harness finds and stops a MariaDB server of this cluster that its pid file no longer
# names. A failed start attempt once left such a mariadbd running (2026-12-07): stop.sh, which
# went by the pid file only, left it, and it held the MariaDB port of the next CI run's cluster,
# which then never started. stop.sh and start.sh now also stop every mariadbd run as mysql whose
# command line names this cluster's data directory (ic_stray_mariadbd, ic_stop_stray_mariadbd).
# The cluster's own server stays up (the group's other tests use it):
# - with the pid file in place nothing is stray; with it moved aside the running server is found;
# - decoys named mariadbd: one of nobody naming this data directory, one of mysql naming a
#   neighbouring one (data2) are never listed nor stopped; one of mysql naming this data
#   directory is listed and ic_stop_stray_mariadbd stops it, while the real server still answers.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
it_begin
named=$(ic_pid mariadbd) || it_fail "this cluster's mariadbd is not named by $IC_RUN/mariadbd.pid"
stray=$(ic_stray_mariadbd)
[ -z "$stray" ] || it_fail "with the pid file in place, stray mariadbd listed: $stray"

pidfile=$IC_RUN/mariadbd.pid
restore() { [ ! -e "$pidfile.t-harness" ] || mv -f "$pidfile.t-harness" "$pidfile"; }
decoy_dir=$IC_DIR/t-harness-decoy
declare -a dpids=()
cleanup() {
	restore
	local p
	for p in "${dpids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$decoy_dir"
	it_cleanup_jobs
}
trap cleanup EXIT
rm -rf "$decoy_dir"
install -d -m 755 "$decoy_dir"
install -m 755 /bin/dash "$decoy_dir/mariadbd"
# decoy USER DATADIR: a process named mariadbd of USER whose command line names DATADIR.
decoy() {
	setpriv --reuid="$1" --regid="$(id -g "$1")" --clear-groups "$decoy_dir/mariadbd" \
		-c 'sleep 120 & s=$!; trap "kill $s; exit 0" TERM; wait' mariadbd "--datadir=$2" &
	dpids+=($!)
	local p=$! n
	for n in $(seq 50); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = mariadbd ] && [ "$(stat -c %U "/proc/$p")" = "$1" ] && return 0
		sleep 0.1
	done
	it_fail "decoy of $1 did not start"
}
decoy nobody "$IC_MYSQL/data"
other=${dpids[0]}
decoy mysql "$IC_MYSQL/data2"
near=${dpids[1]}

mv "$pidfile" "$pidfile.t-harness"
stray=$(ic_stray_mariadbd)
restore
[ "$stray" = "$named" ] || it_fail "pid file moved aside: expected the running mariadbd $named alone, found '${stray//$'\n'/ }'"
[ "$(ic_pid mariadbd)" = "$named" ] || it_fail "pid file not restored"

decoy mysql "$IC_MYSQL/data"
left=${dpids[2]}
stray=$(ic_stray_mariadbd)
[ "$stray" = "$left" ] || it_fail "expected the stray decoy $left alone, found '${stray//$'\n'/ }'"
ic_stop_stray_mariadbd 2>/dev/null
ic_poll 5 ic_gone "$left" || it_fail "stray decoy $left still running after ic_stop_stray_mariadbd"
for p in "$other" "$near" "$named"; do
	! ic_gone "$p" || it_fail "process $p stopped, but it is not a stray of this cluster"
done
mariadb-admin --no-defaults -S "$IC_MYSQL_SOCK" -u root ping >/dev/null 2>&1 ||
	it_fail "this cluster's MariaDB server no longer answers"
it_info "mariadbd $named found without its pid file; the stray decoy $left stopped; decoys $other (nobody) and $near (data2) left alone"
it_pass
