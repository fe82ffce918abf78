#!/bin/bash
# cluster-args: --config etc/idletime.json
# timeout: 1500
# A short replay of the openb trace (2 trace hours at 120x: 60 s of submissions per configuration)
# through this cluster under all four configurations, A (no borrowing), B (plain Slurm scavenger),
# C (idletime) and D (C + preempt/idletime + site_factor/idletime): exit 0 (every invariant held),
# every report file written, each configuration ran with the slurmctld plugins it names, runs in
# the right partitions; no configuration submits before slurmctld's first scheduling pass; the jobs of an earlier replay that was killed are cancelled first. The trace slice is in the repository (testsuite/replay/data/README.md).
# The cluster-args line gives the replay a cluster of its own: it restarts it per configuration.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
it_begin
REPLAY=$(command -v idletime-replay) || it_fail "idletime-replay not on PATH (make install)"
PREFIX=$(dirname "$(dirname "$REPLAY")")
TRACE=$IC_SRC/../replay/data/openb_gpuspec33_12100000_2h.csv
OUT=$IC_DIR/replay-short
rm -rf "$OUT"
# A replay killed mid-run leaves its jobs in slurmctld, which recovers them (or requeues them)
# at every restart; the next replay into the same --out cancels them, says so, and runs (stop 21's
# CI: a killed run's jobs made the next one refuse with "30 jobs of others are pending").
timeout -s KILL 60 "$REPLAY" run --trace "$TRACE" --out "$OUT" --window-len 7200 --compress 120 --requeue-delay 10 \
	--configs A --cluster-dir "$IC_DIR" --prefix "$PREFIX" >"$IC_DIR/replay-killed.log" 2>&1
left=$(squeue -h -o %i | wc -l)
[ "$left" -gt 0 ] || it_fail "the replay killed after 60 s left no job: $(tail -n 3 "$IC_DIR/replay-killed.log" | tr '\n' '|')"
rm -rf "$OUT"
log0=$(wc -l <"$IC_LOGD/slurmctld.log")
"$REPLAY" run --trace "$TRACE" --out "$OUT" --window-len 7200 --compress 120 --requeue-delay 10 \
	--cluster-dir "$IC_DIR" --prefix "$PREFIX" >"$IC_DIR/replay-short.log" 2>&1 ||
	it_fail "idletime-replay exited $?: $(tail -n 8 "$IC_DIR/replay-short.log" | tr '\n' '|')"
grep -q "^idletime-replay: cancelling [1-9][0-9]* jobs of an earlier replay into $OUT" "$IC_DIR/replay-short.log" ||
	it_fail "the $left jobs of the killed replay were not cancelled with a line saying so"
for f in report.md summary.csv alloc.png alloc.svg waits.png lost.png quota-D.png A/runs.csv B/runs.csv C/runs.csv D/runs.csv; do
	[ -s "$OUT/$f" ] || it_fail "$f missing"
done
it_assert_eq 4 "$(awk -F, 'NR>1 && $NF==0' "$OUT/summary.csv" | wc -l)" "configurations without invariant violations"
# The report names what slurmctld ran, as checked by the replay before each configuration.
grep -qF -- '- **D**: idletime + preempt/idletime (least lost work first) + site_factor/idletime (slurmctld: PreemptType=preempt/idletime, PriorityType=priority/multifactor, JobSubmitPlugins=idletime)' \
	"$OUT/report.md" || it_fail "report.md: D without its plugins: $(grep -F -- '- **D**' "$OUT/report.md")"
grep -qF -- '(slurmctld: PreemptType=preempt/partition_prio, PriorityType=priority/basic, JobSubmitPlugins=(none))' \
	"$OUT/report.md" || it_fail "report.md: A/B not on plain Slurm: $(grep -F -- '- **' "$OUT/report.md")"
# A never uses idle partitions; B, C and D run every idle-time job's runs in idle-<pool>.
awk -F, 'NR>1 && $10 ~ /^idle-/' "$OUT/A/runs.csv" | grep -q . && it_fail "A ran a job in an idle partition"
for c in B C D; do
	awk -F, 'NR>1 && $2=="idle" && $10 !~ /^idle-/' "$OUT/$c/runs.csv" | grep -q . && it_fail "$c ran an idle-time job in quota"
	[ "$(awk -F, 'NR>1 && $2=="idle"' "$OUT/$c/runs.csv" | wc -l)" -gt 0 ] || it_fail "$c ran no idle-time job"
done
# Time 0 of a configuration comes after slurmctld's first scheduling pass: a restarted
# slurmctld runs none for about 3 s, and submissions made sooner waited for it (openb seeds of
# 2026-12-05: C/D guaranteed wait p50 2.9 s against B's 1.1 s). 22.05 logs the pass's
# SchedulerParameters line; every restart in this run must show it before the first submission.
early=$(tail -n +"$((log0 + 1))" "$IC_LOGD/slurmctld.log" | awk '
	/Running as primary controller/ { up = 1; sched = 0; next }
	up && /SchedulerParameters=default_queue_depth/ { sched = 1 }
	up && /_slurm_rpc_submit_batch_job/ { if (!sched) print $1; up = 0 }')
[ -z "$early" ] || it_fail "submissions before slurmctld's first scheduling pass after a restart, at: $early"
# Time 0 also comes right after a scheduling pass, asked for by a held probe job that never runs:
# 22.05 runs a submission's pass from its once-a-second background loop, and before 2026-12-06 the
# first burst of B was allocated 0.04-0.09 s after its submission and that of C 0.89-0.91 s (openb
# seed 1), only because time 0 fell at another point of that second. Each configuration: one probe,
# cancelled, never started; the median allocation delay of the first burst (the jobs submitted
# within 0.2 s of the first) differs by less than 0.3 s between configurations. Only the main
# scheduler's "sched: Allocate" counts: the backfill pass (every 30 s, its own timer) sometimes
# falls inside that second and starts a burst sooner (0.40 s on 2026-12-06), in any configuration
# alike; at most one configuration may go without a main-scheduler allocation.
ctld_log=$(tail -n +"$((log0 + 1))" "$IC_LOGD/slurmctld.log")
probes=$(sed -n 's/.*_slurm_rpc_submit_batch_job: JobId=\([0-9]*\) InitPrio=0 .*/\1/p' <<<"$ctld_log")
it_assert_eq 4 "$(grep -c . <<<"$probes")" "held probe jobs (one per configuration): $(tr '\n' ' ' <<<"$probes")"
for p in $probes; do
	grep -q "REQUEST_KILL_JOB JobId=$p " <<<"$ctld_log" || it_fail "probe job $p was not cancelled"
	! grep -qE "(Allocate|Started) JobId=$p " <<<"$ctld_log" || it_fail "probe job $p was started"
done
delays=$(awk -v probes="$(tr '\n' ' ' <<<"$probes")" '
	function day(y, m, d) { if (m <= 2) { y--; m += 12 } return 365 * y + int(y / 4) - int(y / 100) + int(y / 400) + int((153 * (m - 3) + 2) / 5) + d }
	function t(ts) { split(substr(ts, 2, 23), a, /[-T:]/); return day(a[1], a[2], a[3]) * 86400 + a[4] * 3600 + a[5] * 60 + a[6] }
	BEGIN { n = split(probes, p, " "); for (i = 1; i <= n; i++) probe[p[i]] = 1 }
	{ id = $0; sub(/.*JobId=/, "", id); sub(/ .*/, "", id) }
	/_slurm_rpc_submit_batch_job: JobId=/ && (id in probe) { seg++; first[seg] = 0; next }
	/_slurm_rpc_submit_batch_job: JobId=/ && seg {
		if (!first[seg]) first[seg] = t($1)
		if (t($1) - first[seg] < 0.2) { sub_t[id] = t($1); seg_of[id] = seg }
	}
	/_start_job: Started JobId=/ { done[id] = 1 }
	/sched: Allocate JobId=/ && (id in sub_t) && !(id in done) { done[id] = 1; d[seg_of[id]] = d[seg_of[id]] " " t($1) - sub_t[id] }
	END { for (s in d) { m = split(substr(d[s], 2), v, " "); for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (v[j] < v[i]) { x = v[i]; v[i] = v[j]; v[j] = x }
		printf "%.3f\n", v[int((m + 1) / 2)] } }' <<<"$ctld_log")
[ "$(grep -c . <<<"$delays")" -ge 3 ] || it_fail "fewer than 3 configurations with a first burst allocated by the main scheduler: $delays"
spread=$(sort -n <<<"$delays" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.3f", hi - lo }')
awk -v s="$spread" 'BEGIN { exit !(s < 0.3) }' ||
	it_fail "first bursts allocated after different parts of slurmctld's second: median delays $(tr '\n' ' ' <<<"$delays")"
# site_factor/idletime ran in D: slurmctld logs its plugin init (the RPC above cannot show it).
tail -n +"$((log0 + 1))" "$IC_LOGD/slurmctld.log" | grep -q "idletime/site_factor: loaded $OUT/idletime.json" ||
	it_fail "D: slurmctld did not log site_factor/idletime loading the replay's config"
it_info "$(grep -E '^\| (preemptions|reclaims|GPU-seconds of work lost)' "$OUT/report.md" | tr '\n' ' ')"
it_pass
