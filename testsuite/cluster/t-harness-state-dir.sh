#!/bin/bash
# start.sh, stop.sh and restart-daemon.sh run as root on a state dir (default
# /var/tmp/idletime-cluster, which anyone may create first): they chmod its directories, execute
# the links in its bin/, signal the PIDs of its run/*.pid and re-run their command lines. A state
# dir a local user made or can write is refused before anything is read or changed:
# (a) a directory of nobody's, whose out/ is a symlink to a directory of root's: start.sh,
#     stop.sh and restart-daemon.sh refuse it; the target keeps its mode (start.sh made out/
#     1777 through the link before), and nothing is created in the planted dir;
# (b) a symlink in place of the state dir; (c) a root-owned state dir whose run/ is a symlink;
# (d) a root-owned state dir under a parent of nobody's: refused too.
# The cluster of this test group is not used.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
H=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d /var/tmp/t-harness-state-dir.XXXXXX) || it_fail "mktemp"
trap 'rm -rf "$T"' EXIT
chmod 755 "$T"
install -d -m 755 "$T/target"
as_nobody() { setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"; }
# refused WHAT DIR: start.sh, stop.sh and restart-daemon.sh exit non-zero naming the state dir.
refused() {
	local what=$1 dir=$2 out rc
	for cmd in "start.sh --dir $dir" "stop.sh --dir $dir" "restart-daemon.sh --dir $dir slurmctld"; do
		# shellcheck disable=SC2086 # word list on purpose
		out=$(IDLETIME_CLUSTER_DIR=$dir timeout 60 "$H"/$cmd 2>&1 </dev/null)
		rc=$?
		[ $rc != 0 ] || it_fail "$what: ${cmd%% *} exited 0: $out"
		grep -q "state dir $dir" <<<"$out" || it_fail "$what: ${cmd%% *} did not say why (rc $rc): $out"
	done
	it_info "$what: refused ($(tail -n1 <<<"$out"))"
}

# (a) made by nobody in the sticky /var/tmp-like $T/sticky.
install -d -m 1777 "$T/sticky"
as_nobody mkdir -m 755 "$T/sticky/planted"
as_nobody ln -s "$T/target" "$T/sticky/planted/out"
refused "a state dir of nobody's (out -> a directory of root's)" "$T/sticky/planted"
[ "$(stat -c %a "$T/target")" = 755 ] || it_fail "(a) the symlink's target changed mode: $(stat -c %a "$T/target")"
left=$(ls -A "$T/sticky/planted" | tr '\n' ' ')
[ "$left" = "out " ] || it_fail "(a) something was created in the planted state dir: $left"

# (b) a symlink in place of the state dir.
install -d -m 755 "$T/real"
ln -s "$T/real" "$T/link"
refused "a symlink in place of the state dir" "$T/link"
[ -z "$(ls -A "$T/real")" ] || it_fail "(b) something was created through the symlink: $(ls -A "$T/real")"

# (c) root's state dir with run/ a symlink.
install -d -m 755 "$T/rooted"
ln -s "$T/target" "$T/rooted/run"
refused "a state dir whose run/ is a symlink" "$T/rooted"

# (d) root's state dir under a parent of nobody's (not sticky: nobody could rename it away).
install -d -m 755 "$T/theirs"; chown nobody "$T/theirs"
install -d -m 755 "$T/theirs/state"
refused "a state dir under a parent of nobody's" "$T/theirs/state"
it_pass
