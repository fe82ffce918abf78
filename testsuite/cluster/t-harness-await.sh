#!/bin/bash
# start.sh waits for each daemon it launches with ic_await: it polls the daemon's readiness check
# and fails at once when the daemon has exited. Until setsid (and env) have exec'd the daemon, the
# launched process is not yet named like it. ic_await took such a process for one that had exited
# (CI 2026-12-07: "munged exited during start" of a munged that was coming up, and twice it
# returned before mariadbd had made its socket: "cannot create the MariaDB user for slurmdbd:
# ERROR 2002 ... (2)"). Checked here with a stand-in daemon (a copy of dash named itawaitd), in
# a directory of the test's own under the cluster's state dir; no job and no daemon of the
# cluster is used:
# (a) a daemon whose exec comes 1.5 s late is waited for, and ic_await returns only once its
#     check succeeds (after 2 s, well before its 20 s timeout);
# (b) a launched process that exits is reported at once as "exited during start";
# (c) a daemon that runs but never gets ready is reported as "did not become ready within 2s";
# (d) a check that succeeds while the launched process is not the daemon (something else
#     answers) is reported as "answers, but its process ... is not named itawaitd".
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
[ -d "$IC_DIR" ] || it_fail "no cluster state dir $IC_DIR"
T=$(mktemp -d "$IC_DIR/t-harness-await.XXXXXX") || it_fail "mktemp under $IC_DIR"
groups=()
# A stand-in's process group is signalled only while one of its processes is left (the id of a
# group in use is not given to another process).
cleanup() {
	local g
	for g in "${groups[@]}"; do kill -0 -- "-$g" 2>/dev/null && kill -- "-$g" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$T/run" "$T/log" "$T/bin"
install -m 755 /bin/dash "$T/bin/itawaitd"
# shellcheck disable=SC2034 # read by ic_launch and ic_await (common.sh)
IC_RUN=$T/run IC_LOGD=$T/log
# The stand-in's body: READY-FILE touched after DELAY, then it waits for SIGTERM (its sleep goes too).
body() { echo "sleep $1; touch $2; sleep 60 & s=\$!; trap 'kill \$s; exit 0' TERM; wait"; }
launch() { ic_launch itawaitd "$@"; groups+=("$(cat "$IC_RUN/itawaitd.pid")"); }
ready_file() { [ -e "$T/ready" ]; }
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

# (a) exec 1.5 s after the launch, ready 0.5 s after that.
t0=$(date +%s%N)
launch bash -c "sleep 1.5; exec '$T/bin/itawaitd' -c \"$(body 0.5 "$T/ready")\""
out=$( (ic_await itawaitd 20 ready_file) 2>&1) || it_fail "(a) a daemon whose exec came late was not waited for: $out"
ms=$(ms_since "$t0")
ready_file || it_fail "(a) ic_await returned after ${ms} ms, before the daemon's check succeeded"
[ "$ms" -ge 1900 ] || it_fail "(a) ic_await returned after ${ms} ms, before the daemon could be ready (2,000 ms)"
[ "$ms" -lt 10000 ] || it_fail "(a) ic_await returned after ${ms} ms: it did not return once the daemon was ready (2,000 ms)"
ic_running itawaitd || it_fail "(a) the daemon is not running after ic_await"
ic_stop_daemon itawaitd 5
rm -f "$T/ready"

# (b) the launched process exits before it is ever the daemon.
t0=$(date +%s%N)
launch bash -c 'sleep 0.3; exit 3'
if out=$( (ic_await itawaitd 20 ready_file) 2>&1); then it_fail "(b) ic_await succeeded for a process that exited"; fi
ms_b=$(ms_since "$t0")
grep -q "itawaitd exited during start" <<<"$out" || it_fail "(b) expected 'itawaitd exited during start', got: $out"
[ "$ms_b" -lt 10000 ] || it_fail "(b) the exit was reported after ${ms_b} ms, not at once"

# (c) running, never ready.
launch "$T/bin/itawaitd" -c "$(body 0 "$T/other")"
if out=$( (ic_await itawaitd 2 ready_file) 2>&1); then it_fail "(c) ic_await succeeded for a daemon never ready"; fi
grep -q "itawaitd did not become ready within 2s" <<<"$out" || it_fail "(c) expected 'did not become ready within 2s', got: $out"
ic_stop_daemon itawaitd 5

# (d) the check succeeds at once, but the launched process is a shell, not itawaitd.
touch "$T/ready"
launch bash -c "$(body 0 "$T/other")"
if out=$( (ic_await itawaitd 5 ready_file) 2>&1); then it_fail "(d) ic_await succeeded for a process that is not itawaitd"; fi
grep -q "itawaitd answers, but its process [0-9]* is not named itawaitd" <<<"$out" ||
	it_fail "(d) expected 'answers, but its process ... is not named itawaitd', got: $out"
it_info "late exec waited for: ready after ${ms} ms; an exit reported after ${ms_b} ms; never ready and not the daemon reported"
it_pass
