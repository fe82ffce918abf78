#!/bin/bash
# cluster-args: --config testsuite/sched/data/sched16.json --extra-conf testsuite/sched/data/sched-slurm.conf
# preempt/idletime and site_factor/idletime never take slurmctld down:
#  (a) a broken config at `scontrol reconfigure`: both keep the last good one (log line) and
#      preemption still follows it; a fixed file is loaded again;
#  (b) plugins built for another Slurm version (plugin_version 0x160507): slurmctld refuses them
#      with a clear log line (and idletime's own naming both releases); for site_factor it keeps running without the factor; for preempt
#      Slurm itself makes the failed PreemptType fatal at start (asserted, so a change shows).
# Restarts slurmctld of the cluster (by pid) and leaves it as it found it. Run on your own instance.
# Env: IDLETIME_BUILD_DIR (build tree with plugins/*/badver/.libs, default $PWD).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# Checked before it_begin (which cancels every job): the sched cluster, IDLETIME_CONFIG=testsuite/sched/data/sched16.json and start.sh
# --config testsuite/sched/data/sched16.json --extra-conf testsuite/sched/data/sched-slurm.conf
scontrol show config | grep -q '^PreemptType *= *preempt/idletime' && scontrol show partition idle-p16 >/dev/null 2>&1 ||
	it_fail "needs the sched cluster (sched16.json + sched-slurm.conf, see testsuite/sched/README)"
it_begin
SLEEP=$IT_JOBS_DIR/sleep.sh
BUILD=${IDLETIME_BUILD_DIR:-$PWD}
BAD_PREEMPT=$BUILD/plugins/preempt/badver/.libs/preempt_idletime.so
BAD_SITE=$BUILD/plugins/site_factor/badver/.libs/site_factor_idletime.so
[ -f "$BAD_PREEMPT" ] && [ -f "$BAD_SITE" ] || it_fail "no badver plugins under $BUILD (make check builds them)"
LOG=$IC_LOGD/slurmctld.log
pid=$(ic_pid slurmctld) || it_fail "slurmctld not running"
ORIG_CFG=$(tr '\0' '\n' <"/proc/$pid/environ" | sed -n 's/^IDLETIME_CONFIG=//p')
[ -f "$ORIG_CFG" ] || it_fail "slurmctld has no IDLETIME_CONFIG"
CFG=$IC_ETC/safety.json
cp "$ORIG_CFG" "$CFG"

# ctld CONF CONFIG: restart slurmctld with slurm.conf CONF and IDLETIME_CONFIG; 0 when it answers.
ctld() {
	ic_stop_daemon slurmctld 30
	setsid env IDLETIME_CONFIG="$2" "$IC_BIN/slurmctld" -D -f "$1" </dev/null >>"$IC_LOGD/slurmctld.out" 2>&1 &
	echo $! >"$IC_RUN/slurmctld.pid"
	ic_poll 30 ic_ctld_up
}
since() { tail -n +"$(($1 + 1))" "$LOG"; }
mark() { wc -l <"$LOG"; }
restore() { ctld "$IC_CONF" "$ORIG_CFG" >/dev/null 2>&1 || echo "t-sched-safety: could not restart slurmctld" >&2; }
trap 'it_cleanup_jobs; restore' EXIT

m=$(mark)
ctld "$IC_CONF" "$CFG" || it_fail "slurmctld did not come up with the copied config"
since "$m" | grep -q "idletime/preempt: loaded $CFG" || it_fail "preempt/idletime did not load $CFG"

# ---- (a) broken config at reconfigure
# Marked before the file changes: the plugins' watcher also reloads on the file's own change, and
# once logged its "keeping" line before a mark taken after the write (CI, 2026-12-06).
m=$(mark)
printf '{"tenants": [' >"$CFG"
scontrol reconfigure || it_fail "scontrol reconfigure"
idle=$(it_submit alice -J safety-idle --idle-resources=only --quota=team-a --gres=gpu:12 -c 1 "$SLEEP" 600) || it_fail "sbatch idle"
it_wait_state "$idle" RUNNING 60 || it_fail "idle-time job $idle did not start"
owner=$(it_submit alice -J safety-owner --quota=team-a --idle-resources=none --gres=gpu:4 -c 1 "$SLEEP" 600) || it_fail "sbatch owner"
it_wait_state "$owner" RUNNING 60 || it_fail "guaranteed job $owner did not start under the kept config"
ic_ctld_up || it_fail "slurmctld went down after a broken config"
# The plugins' watcher reloads once a second after the reconfigure; the owner can start sooner
# (preempt/idletime asks for its pass at once), so the line is waited for.
kept() { since "$m" | grep -q "idletime/$1: $CFG: .*keeping the last good config"; }
for c in preempt site_factor; do
	ic_poll 10 kept "$c" || it_fail "no 'keeping the last good config' line from $c within 10 s"
	line=$(since "$m" | grep "idletime/$c: $CFG: .*keeping the last good config" | head -n1)
	it_info "(a) ${line#*] }"
done
cp "$ORIG_CFG" "$CFG"
m=$(mark)
scontrol reconfigure || it_fail "scontrol reconfigure"
ic_poll 10 sh -c "tail -n +$((m + 1)) '$LOG' | grep -q 'idletime/site_factor: loaded $CFG'" ||
	it_fail "the repaired config was not loaded again"
it_cleanup_jobs || it_fail "jobs did not end"

# ---- (b) plugins built for another Slurm version
plugdir=$(sed -n 's/^PluginDir=//p' "$IC_CONF" | cut -d: -f1)
bad=$IC_DIR/badver-plugins
for kind in site_factor preempt; do
	rm -rf "$bad" && mkdir -p "$bad"
	for f in "$plugdir"/*.so; do ln -s "$f" "$bad/"; done
	if [ "$kind" = preempt ]; then ln -sf "$BAD_PREEMPT" "$bad/preempt_idletime.so"; else ln -sf "$BAD_SITE" "$bad/site_factor_idletime.so"; fi
	sed "s|^PluginDir=$plugdir:|PluginDir=$bad:|" "$IC_CONF" >"$IC_ETC/slurm-badver.conf"
	m=$(mark)
	if ctld "$IC_ETC/slurm-badver.conf" "$ORIG_CFG"; then up=1; else up=0; fi
	sleep 2
	line=$(since "$m" | grep "Incompatible Slurm plugin .* version" | head -n1)
	[ -n "$line" ] || it_fail "$kind: no log line about the plugin version"
	# idletime's own line (plugins/compat/version_guard.c) names both releases.
	host=$(scontrol -V | awk '{print $2}')
	guard=$(since "$m" | grep "idletime: $kind/idletime (.*) was built for Slurm 22.05.7 but this is Slurm $host: not loaded" | head -n1)
	[ -n "$guard" ] || it_fail "$kind: no idletime log line naming both releases (22.05.7 and $host)"
	it_info "(b) $kind 0x160507: slurmctld up=$up; log: ${line#*] }"
	if [ "$kind" = site_factor ]; then
		[ "$up" = 1 ] || it_fail "slurmctld went down on a site_factor plugin of another version"
		j=$(it_submit bob -J safety-sf --idle-resources=only --quota=team-b --gres=gpu:1 -c 1 "$SLEEP" 60) || it_fail "sbatch with refused site_factor"
		it_wait_state "$j" RUNNING 60 || it_fail "job $j did not run with the refused site_factor plugin"
		it_cleanup_jobs
	else
		# Slurm's rule, not ours: a PreemptType that cannot load is fatal at slurmctld start
		# (controller.c), before any plugin code runs. The refusal is clear and nothing half-runs.
		[ "$up" = 0 ] || it_fail "slurmctld started with a preempt plugin of another version"
		since "$m" | grep -q "fatal: failed to initialize preempt plugin" || it_fail "no fatal line for the preempt plugin"
	fi
done
restore
ic_ctld_up || it_fail "slurmctld not back with the good plugins"
it_pass
