#!/bin/bash
# `acceptable` jobs: with room in the quota the job starts In Quota and is never preempted for its
# whole run, even when an owner needs GPUs; with the quota full it starts on idle capacity and is
# preemptible; after that requeue it returns In Quota once the quota has room.
#   A1: alice acceptable 4 GPUs -> quota-team-a (quota team-a now full), runs until told to stop.
#   A2: alice acceptable 4 GPUs -> idle-a100-east (quota full), IDLETIME_PREEMPTIBLE=1.
#   two `only` jobs fill a100-west; bob's guaranteed 4-GPU job (team-b, a100-east) then needs a
#   node: A2 is preempted and requeued, A1 keeps running (sampled every 0.2 s); A1 ends, A2 starts
#   again in quota-team-a with IDLETIME_PREEMPTIBLE=0.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
it_begin
grep -q '^JobSubmitPlugins=idletime' "$IC_CONF" || it_fail "cluster runs without job_submit/idletime"
OUT=$IC_DIR/out
# Prints each run's idletime view, traps the notice, runs until $OUT/stop-<jobid> exists.
JOB='echo "RUN restarts=$IDLETIME_RESTART_COUNT preemptible=$IDLETIME_PREEMPTIBLE partition=$SLURM_JOB_PARTITION"
trap "echo NOTICE" USR1; until [ -e '"$OUT"'/stop-$SLURM_JOB_ID ]; do sleep 0.5; done'
sub() { it_submit alice -J "$1" -N1 --gres=gpu:a100:4 -o "$OUT/acc-%j.out" --open-mode=append "${@:2}" --wrap="$JOB"; }
rm -f "$OUT"/stop-*

a1=$(sub acc-1 --idle-resources=acceptable) || it_fail "sbatch A1"
it_wait_state "$a1" RUNNING 30 || it_fail "A1 $a1 did not start"
it_assert_eq quota-team-a "$(it_job_field "$a1" Partition | cut -d, -f1)" "partition A1 started in (room in quota)"
a2=$(sub acc-2 --idle-resources=acceptable) || it_fail "sbatch A2"
it_wait_state "$a2" RUNNING 30 || it_fail "A2 $a2 did not start (Reason=$(it_job_field "$a2" Reason))"
p2=$(it_job_field "$a2" Partition | cut -d, -f1)
[[ $p2 == idle-a100-* ]] || it_fail "A2 started in $p2 with the quota full, not on idle capacity"
ic_poll 20 grep -qs "^RUN restarts=0 preemptible=1 partition=$p2" "$OUT/acc-$a2.out" || it_fail "A2 not told it is preemptible: $(cat "$OUT/acc-$a2.out")"
grep -qs "^RUN restarts=0 preemptible=0 partition=quota-team-a" "$OUT/acc-$a1.out" || it_fail "A1 not told it is guaranteed: $(cat "$OUT/acc-$a1.out")"
for i in 1 2; do
	o=$(sub only-$i --idle-resources=only) || it_fail "sbatch only-$i"
	it_wait_state "$o" RUNNING 30 || it_fail "only job $o did not start"
done
it_info "A1 $a1 in quota-team-a on $(it_job_field "$a1" NodeList); A2 $a2 in $p2 on $(it_job_field "$a2" NodeList); a100 full"

# check_a1: A1 still running its first run in the quota partition.
check_a1() {
	local line
	line=$(scontrol show job -o "$a1" | tr ' ' '\n' | grep -E '^(JobState|Restarts|Partition)=' | tr '\n' ' ')
	[ "$line" = "JobState=RUNNING Restarts=0 Partition=quota-team-a " ] || it_fail "A1 $a1 disturbed: $line"
}
owner=$(it_submit bob -J owner --quota=team-b -N1 --gres=gpu:a100:4 --wrap='sleep 600') || it_fail "sbatch owner"
deadline=$(($(date +%s) + 150)) samples=0
until [ "$(it_job_field "$owner" JobState)" = RUNNING ]; do
	[ "$(date +%s)" -lt "$deadline" ] || it_fail "owner $owner did not start in 150 s (Reason=$(it_job_field "$owner" Reason))"
	check_a1; samples=$((samples + 1)); sleep 0.2
done
it_assert_eq 1 "$(it_job_field "$a2" Restarts)" "restarts of A2 (the preemptible acceptable job)"
grep -qx NOTICE "$OUT/acc-$a2.out" || it_fail "A2 got no checkpoint notice"
# -D: the requeued job's newest record is the pending one; slurmdbd gets records asynchronously.
a2_preempted() { sacct -n -X -D -j "$a2" -o State -P | grep -q PREEMPTED; }
ic_poll 20 a2_preempted || it_fail "sacct has no PREEMPTED record for A2"
for _ in $(seq 1 25); do check_a1; samples=$((samples + 1)); sleep 0.2; done
it_info "owner $owner running; A2 $a2 preempted+requeued; A1 unchanged in $samples samples"

# A1 ends; A2 (requeued; idletime-ft-hook lifted Slurm's requeue hold) may now start In Quota.
it_wait_state "$a2" PENDING 60 || it_fail "A2 not PENDING after the requeue"
touch "$OUT/stop-$a1"
it_wait_state "$a1" COMPLETED 30 || it_fail "A1 did not complete"
it_assert_eq 0 "$(it_job_field "$a1" Restarts)" "restarts of A1 over its whole run"
sacct -n -X -j "$a1" -o State -P | grep -qv COMPLETED && it_fail "A1 has a non-COMPLETED record: $(sacct -n -X -j "$a1" -o State -P | tr '\n' ' ')"
it_wait_state "$a2" RUNNING 30 || it_fail "A2 did not start again (Reason=$(it_job_field "$a2" Reason))"
it_assert_eq quota-team-a "$(it_job_field "$a2" Partition | cut -d, -f1)" "partition of A2's second run"
ic_poll 20 grep -qs "^RUN restarts=1 preemptible=0 partition=quota-team-a" "$OUT/acc-$a2.out" ||
	it_fail "A2's second run not in quota / not told: $(cat "$OUT/acc-$a2.out")"
it_info "A1 $a1 COMPLETED, never preempted; A2 $a2 back In Quota (restarts=1, preemptible=0)"
rm -f "$OUT"/stop-*
it_pass
