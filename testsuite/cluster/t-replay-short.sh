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
it_assert_eq 4 "$(awk -F, 'NR>1 && $27==0' "$OUT/summary.csv" | wc -l)" "configurations without invariant violations"
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
# site_factor/idletime ran in D: slurmctld logs its plugin init (the RPC above cannot show it).
tail -n +"$((log0 + 1))" "$IC_LOGD/slurmctld.log" | grep -q "idletime/site_factor: loaded $OUT/idletime.json" ||
	it_fail "D: slurmctld did not log site_factor/idletime loading the replay's config"
it_info "$(grep -E '^\| (preemptions|reclaims|GPU-seconds of work lost)' "$OUT/report.md" | tr '\n' ' ')"
it_pass
