#!/bin/bash
# start.sh, stop.sh and restart-daemon.sh run as root on a state dir (default
# /var/tmp/idletime-cluster, which anyone may create first): they chmod its directories, execute
# the links in its bin/, signal the PIDs of its run/*.pid and re-run their command lines. A state
# dir a local user made or can write is refused before anything is read or changed:
# (a) a directory of nobody's, whose out/ is a symlink to a directory of root's: start.sh,
#     stop.sh and restart-daemon.sh refuse it; the target keeps its mode (start.sh made out/
#     1777 through the link before), and nothing is created in the planted dir;
# (b) a symlink in place of the state dir; (c) a root-owned state dir whose run/ is a symlink;
# (d) a root-owned state dir under a parent of nobody's; (e) a symlink given with a trailing '/':
#     refused too;
# (f) a state dir missing when start.sh looks: start.sh creates it before it checks it, so a
#     directory of nobody's put in its place right after the check (by a `date` that start.sh
#     calls next) is not used: the rename fails and the state dir stays root's (checked while
#     missing, the planted one was used);
# (g) accepted: stop.sh on a missing state dir (nothing to stop) and on a fresh one of root's.
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
		grep -qF "state dir ${dir%/}" <<<"$out" || it_fail "$what: ${cmd%% *} did not say why (rc $rc): $out"
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

# (e) the symlink of (b) with a trailing '/' (stat would follow it).
refused "a symlink given with a trailing '/'" "$T/link/"

# (f) the race: a `date` first in PATH moves nobody's directory (out -> target) into place.
install -d -m 755 "$T/shim"
as_nobody mkdir -m 755 "$T/sticky/plant"
as_nobody ln -s "$T/target" "$T/sticky/plant/out"
{
	echo '#!/bin/sh'
	echo "[ -e '$T/shim/tried' ] || { touch '$T/shim/tried'; setpriv --reuid=nobody --regid=$(id -g nobody) --clear-groups mv -T '$T/sticky/plant' '$T/sticky/fresh' 2>'$T/shim/mv.err'; }"
	echo 'exec /bin/date "$@"'
} >"$T/shim/date"
chmod 755 "$T/shim/date"
# --cgroup-conf of a missing file: start.sh stops right after its checks, before any daemon.
out=$(PATH=$T/shim:$PATH IDLETIME_CLUSTER_DIR=$T/sticky/fresh timeout 60 "$H/start.sh" --dir "$T/sticky/fresh" --cgroup-conf "$T/none" 2>&1 </dev/null)
[ -e "$T/shim/tried" ] || it_fail "(f) start.sh did not call date after its check: $out"
[ "$(stat -c %U "$T/sticky/fresh")" = root ] || it_fail "(f) the state dir is $(stat -c %U "$T/sticky/fresh")'s: the planted directory was used"
[ ! -L "$T/sticky/fresh/out" ] || it_fail "(f) the planted out/ symlink is in the state dir"
[ "$(stat -c %a "$T/target")" = 755 ] || it_fail "(f) the symlink's target changed mode"
it_info "(f) nobody's directory moved into place after the check: $(cat "$T/shim/mv.err")"

# (g) accepted.
out=$("$H/stop.sh" --dir "$T/sticky/missing" 2>&1) || it_fail "(g) stop.sh on a missing state dir: $out"
grep -q "nothing to stop" <<<"$out" || it_fail "(g) stop.sh on a missing state dir said: $out"
[ ! -e "$T/sticky/missing" ] || it_fail "(g) stop.sh created the missing state dir"
out=$("$H/stop.sh" --dir "$T/sticky/fresh" 2>&1) || it_fail "(g) stop.sh on root's fresh state dir: $out"
it_pass
