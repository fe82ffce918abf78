#!/bin/bash
# Counters are exact across slurmctld restarts. Alice's idle-time job (--max-restarts=3) runs
#   run 0: exit 137 (retryable)         -> f=1, requeued with backoff; slurmctld restarted while pending
#   run 1: waits; slurmctld restarted while it runs; then preempted by bob's job -> p=1;
#          slurmctld restarted while pending
#   run 2: exit 137                     -> slurmctld restarted the moment the run ends (the hook's
#                                          requeue must get through the restart) -> f=2
#   run 3: exit 0                       -> COMPLETED
# Final: Restarts=3, accounting AdminComment "p":1,"f":2, one history entry per run (r 0..3,
# kinds exit, preempt, exit, ok), nothing lost or counted twice. slurmctld is restarted with
# restart-daemon.sh (stop by PID, start again as start.sh does).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=ft-lib.sh
. "$IC_SRC/ft-lib.sh"
it_begin
ft_require_hook
grep -q '^JobSubmitPlugins=idletime' "$IC_CONF" || it_fail "cluster runs without job_submit/idletime"
J=$IT_JOBS_DIR/ft-job.sh
# ctld_config: the IDLETIME_CONFIG in slurmctld's environment (its plugins' config).
ctld_config() { tr '\0' '\n' <"/proc/$(ic_pid slurmctld)/environ" | sed -n 's/^IDLETIME_CONFIG=//p'; }
CTLD_CONFIG=$(ctld_config)
[ -n "$CTLD_CONFIG" ] || it_fail "slurmctld runs without IDLETIME_CONFIG"
restart_ctld() {
	local log
	log=$("$IC_SRC/restart-daemon.sh" --dir "$IC_DIR" slurmctld 2>&1) || it_fail "slurmctld restart ($1) failed: $log"
	it_info "${log##*$'\n'} ($1)"
	ic_ctld_up || it_fail "slurmctld not up after restart ($1)"
	# Restarted without it, its plugins fell back to /etc/idletime/idletime.json (found 2026-12-06).
	[ "$(ctld_config)" = "$CTLD_CONFIG" ] || it_fail "slurmctld restarted without IDLETIME_CONFIG=$CTLD_CONFIG ($1)"
	RESTARTS=$((RESTARTS + 1))
}
admin_has() { [[ $(ft_admin "$1") == *"$2"* ]]; }
RESTARTS=0
id=$(it_submit alice -J ft-ctld --idle-resources=only -w a100-1 --gres=gpu:a100:4 --max-restarts=3 \
	-t 10 --open-mode=append "$J" plan exit:137 wait exit:137 ok) || it_fail "sbatch"
out=$(it_job_out "$id")

# run 0 fails; restart while it waits out the backoff
it_wait_field "$id" Restarts 1 90 || it_fail "run 0 of $id not requeued"
ic_poll 20 admin_has "$id" '"p":0,"f":1,' || it_fail "run 0 not counted: $(ft_admin "$id")"
restart_ctld "job pending after run 0"
admin_has "$id" '"p":0,"f":1,' || it_fail "counters lost by the restart: $(ft_admin "$id")"

# run 1: restart while it runs, then preemption, then restart while pending
it_wait_state "$id" RUNNING 120 || it_fail "run 1 of $id did not start (Reason=$(it_job_field "$id" Reason))"
rc_line() { grep -q "$2" "$1" 2>/dev/null; }
ic_poll 30 rc_line "$out" '^plan run 1: wait' || it_fail "run 1 did not start its plan: $(cat "$out")"
restart_ctld "job running (run 1)"
it_assert_eq RUNNING "$(it_job_field "$id" JobState)" "state of $id after restarting slurmctld mid-run"
owner=$(it_submit bob -J ft-ctld-owner --quota=team-b -w a100-1 --gres=gpu:a100:4 "$J" sleep 600) || it_fail "owner sbatch"
it_wait_state "$owner" RUNNING 90 || it_fail "owner $owner did not start (Reason=$(it_job_field "$owner" Reason))"
it_wait_field "$id" Restarts 2 60 || it_fail "run 1 of $id not requeued by the preemption"
ic_poll 20 admin_has "$id" '"p":1,"f":1,' || it_fail "preemption not counted: $(ft_admin "$id")"
# The restart while the owner holds the GPUs: the hook lifts Slurm's requeue hold of a preempted
# run, so the job starts run 2 as soon as the owner ends.
restart_ctld "job pending after the preemption"
it_assert_eq PENDING "$(it_job_field "$id" JobState)" "state of $id while the owner runs"
admin_has "$id" '"p":1,"f":1,' || it_fail "counters lost by the restart: $(ft_admin "$id")"
scancel "$owner"
it_wait_state "$owner" "CANCELLED|COMPLETED" 60 || it_fail "owner $owner did not end"

# run 2 fails; restart slurmctld as soon as it has ended
ic_poll 120 rc_line "$out" '^plan run 2: exit:137' || it_fail "run 2 did not start: $(cat "$out")"
t_end=$(date +%s%N)
restart_ctld "right after run 2 ended"
it_info "slurmctld restarted $((($(date +%s%N) - t_end) / 1000000)) ms after run 2's exit was seen"
it_wait_field "$id" Restarts 3 120 || it_fail "run 2 of $id not requeued across the restart: $(ft_admin "$id")"
ic_poll 30 admin_has "$id" '"p":1,"f":2,' || it_fail "run 2 not counted: $(ft_admin "$id")"
# Informational: did the hook's requeue of run 2 reach the old or the restarted slurmctld?
where=$(awk -v j="Requeuing JobId=$id\$" '/slurmctld version .* started/ { n++ } $0 ~ j { last = n } END { print (last == n ? "the restarted" : "the old") }' "$IC_LOGD/slurmctld.log")
it_info "run 2's requeue was done by $where slurmctld"

# run 3 completes
ft_wait_final "$id" 180 || it_fail "job $id did not end"
it_assert_eq COMPLETED "$(it_job_field "$id" JobState)" "final state of $id"
it_assert_eq 3 "$(it_job_field "$id" Restarts)" "Restarts of $id"
ft_acct_has "$id" '"p":1,"f":2,' || it_fail "final counters of $id: $(ft_acct "$id")"
acct=$(ft_acct "$id")
hist=$(grep -oE '"r":[0-9]+,"k":"[a-z]+"' <<<"$acct" | tr '\n' ' ')
it_assert_eq '"r":0,"k":"exit" "r":1,"k":"preempt" "r":2,"k":"exit" "r":3,"k":"ok" ' "$hist" "history of $id"
it_assert_eq 4 "$(grep -c '^plan run ' "$out")" "runs of $id in its output"
it_info "job $id: $RESTARTS slurmctld restarts; final $acct"
it_pass
