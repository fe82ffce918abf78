#!/bin/bash
# The test harness finds a MariaDB server of this cluster that its pid file no longer names. A
# failed start attempt once left such a mariadbd running (2026-12-07): stop.sh, which went by the
# pid file only, left it, and it held the MariaDB port of the next CI run's cluster, which then
# never started. stop.sh and start.sh now also stop every mariadbd run as mysql whose command
# line names this cluster's data directory (ic_stray_mariadbd). Here, without stopping anything
# (the group's other tests use this server): with the pid file in place nothing is stray; with
# the pid file moved aside the running server is found, and only it; a process of another user
# that names the same data directory is not.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
it_begin
named=$(ic_pid mariadbd) || it_fail "this cluster's mariadbd is not named by $IC_RUN/mariadbd.pid"
stray=$(ic_stray_mariadbd)
[ -z "$stray" ] || it_fail "with the pid file in place, stray mariadbd listed: $stray"

pidfile=$IC_RUN/mariadbd.pid
restore() { [ ! -e "$pidfile.t-harness" ] || mv -f "$pidfile.t-harness" "$pidfile"; }
# A decoy of another user: a process named mariadbd whose command line names this data directory.
decoy=$(mktemp -d)
trap 'restore; [ -z "${dpid:-}" ] || kill "$dpid" 2>/dev/null; rm -rf "$decoy"; it_cleanup_jobs' EXIT
cp /bin/dash "$decoy/mariadbd"
chmod 755 "$decoy"
setpriv --reuid=nobody --regid=nogroup --clear-groups "$decoy/mariadbd" -c 'sleep 60 & s=$!; trap "kill $s; exit 0" TERM; wait' mariadbd "--datadir=$IC_MYSQL/data" &
dpid=$!
decoy_up() { [ "$(cat "/proc/$dpid/comm" 2>/dev/null)" = mariadbd ]; }
ic_poll 5 decoy_up || it_fail "decoy did not start"

mv "$pidfile" "$pidfile.t-harness"
stray=$(ic_stray_mariadbd)
restore
[ "$stray" = "$named" ] || it_fail "pid file moved aside: expected the running mariadbd $named, found '${stray//$'\n'/ }'"
[ "$(ic_pid mariadbd)" = "$named" ] || it_fail "pid file not restored"
it_info "mariadbd $named found without its pid file; the decoy $dpid of nobody was not"
it_pass
