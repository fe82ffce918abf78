#!/bin/bash
# start.sh waits for each daemon it launches with ic_await: it polls the daemon's readiness check
# and fails at once when the daemon has exited. Until setsid (and env) have exec'd the daemon, the
# launched process is not yet named like it. ic_await took such a process for one that had exited
# (CI 2026-12-07: "munged exited during start" of a munged that was coming up, and twice it
# returned before mariadbd had made its socket: "cannot create the MariaDB user for slurmdbd:
# ERROR 2002 ... (2)"). Checked here with a stand-in daemon, in a state dir of the test's own:
# (a) a daemon whose exec comes 1.5 s late is waited for, and ic_await returns only once its
#     check succeeds;
# (b) a launched process that exits is reported at once as "exited during start";
# (c) a daemon that runs but never gets ready is reported as "did not become ready within 2s".
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
it_begin
T=$(mktemp -d /tmp/t-harness-await.XXXXXX)
cleanup() {
	local p
	# Each stand-in runs in its own session (ic_launch): its process group goes with it.
	for p in "${groups[@]}"; do kill -- "-$p" 2>/dev/null; done
	rm -rf "$T"
	it_cleanup_jobs
}
groups=()
trap cleanup EXIT
mkdir -p "$T/run" "$T/log" "$T/bin"
install -m 755 /bin/dash "$T/bin/itawaitd" # /proc comm of the stand-in daemon: itawaitd
IC_RUN=$T/run IC_LOGD=$T/log
ready_file() { [ -e "$T/ready" ]; }
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

# (a) exec 1.5 s after the launch, ready 0.5 s after that.
t0=$(date +%s%N)
ic_launch itawaitd bash -c "sleep 1.5; exec '$T/bin/itawaitd' -c 'sleep 0.5; touch $T/ready; sleep 60'"
groups+=("$(cat "$IC_RUN/itawaitd.pid")")
out=$( (ic_await itawaitd 20 ready_file) 2>&1) || it_fail "(a) a daemon whose exec came late was not waited for: $out"
ms=$(ms_since "$t0")
ready_file || it_fail "(a) ic_await returned after ${ms} ms, before the daemon's check succeeded"
[ "$ms" -ge 1900 ] || it_fail "(a) ic_await returned after ${ms} ms, before the daemon could be ready (2,000 ms)"
ic_running itawaitd || it_fail "(a) the daemon is not running after ic_await"
ic_stop_daemon itawaitd 5
rm -f "$T/ready"

# (b) the launched process exits before it is ever the daemon.
t0=$(date +%s%N)
ic_launch itawaitd bash -c 'sleep 0.3; exit 3'
groups+=("$(cat "$IC_RUN/itawaitd.pid")")
if out=$( (ic_await itawaitd 20 ready_file) 2>&1); then it_fail "(b) ic_await succeeded for a process that exited"; fi
ms_b=$(ms_since "$t0")
grep -q "itawaitd exited during start" <<<"$out" || it_fail "(b) expected 'itawaitd exited during start', got: $out"
[ "$ms_b" -lt 10000 ] || it_fail "(b) the exit was reported after ${ms_b} ms, not at once"

# (c) running, never ready.
ic_launch itawaitd "$T/bin/itawaitd" -c 'sleep 60'
groups+=("$(cat "$IC_RUN/itawaitd.pid")")
if out=$( (ic_await itawaitd 2 ready_file) 2>&1); then it_fail "(c) ic_await succeeded for a daemon never ready"; fi
grep -q "itawaitd did not become ready within 2s" <<<"$out" || it_fail "(c) expected 'did not become ready within 2s', got: $out"
ic_stop_daemon itawaitd 5
it_info "late exec waited for: ready after ${ms} ms; an exit reported after ${ms_b} ms; never ready reported at its timeout"
it_pass
