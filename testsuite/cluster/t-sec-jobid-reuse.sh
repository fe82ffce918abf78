#!/bin/bash
# cluster-args: --config testsuite/cluster/sec-ckpt.json
# A reused job id never resumes another job's checkpoint. slurmctld loses its job state twice
# (stopped, job_state and hash.* removed, started again), so two jobs get the same id (FirstJobId):
#  - job A writes a marker into its IDLETIME_CKPT_DIR and ends;
#  - job B, same id, gets another directory (<id>-<other key>) without the marker, and A's
#    directory is still there with it;
#  - B requeued keeps its directory (the key is stored with the batch job's environment).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
it_begin
# shellcheck source=sec-lib.sh
. "$(dirname "$0")/sec-lib.sh"
sec_restore_root

# Stops slurmctld by its pid, removes its job state, starts it with the same command line.
lose_job_state() {
	local pid state
	it_cleanup_jobs || it_fail "jobs did not end before the state loss"
	pid=$(ic_pid slurmctld) || it_fail "slurmctld is not running"
	mapfile -d '' -t cmd <"/proc/$pid/cmdline"
	state=$(sed -n 's/^StateSaveLocation=//p' "$IC_CONF")
	[ -d "$state" ] || it_fail "no StateSaveLocation in $IC_CONF"
	ic_stop_daemon slurmctld 30
	rm -rf "$state"/job_state "$state"/job_state.old "$state"/hash.*
	setsid "${cmd[@]}" </dev/null >>"$IC_LOGD/slurmctld.out" 2>&1 &
	echo $! >"$IC_RUN/slurmctld.pid"
	ic_poll 30 ic_ctld_up || it_fail "slurmctld did not come back"
	ic_poll 30 sh -c '[ -n "$(sinfo -h -t idle,mix -o %n)" ]' || it_fail "no node came back after the restart"
}
JOB='echo "IDLETIME_CKPT_DIR=$IDLETIME_CKPT_DIR"; echo "MARKER=$(cat "$IDLETIME_CKPT_DIR/marker" 2>/dev/null)"
echo "from job $SLURM_JOB_ID run ${IDLETIME_RESTART_COUNT:-0}" >"$IDLETIME_CKPT_DIR/marker.$$"; [ -e "$IDLETIME_CKPT_DIR/marker" ] || mv "$IDLETIME_CKPT_DIR/marker.$$" "$IDLETIME_CKPT_DIR/marker"
echo "RUN=${IDLETIME_RESTART_COUNT:-0}"; sleep ${HOLD:-0}; echo DONE'

lose_job_state
a=$(it_submit alice --idle-resources=only --gres=gpu:a100:1 -o "$OUT/reuse-%j-a.out" --wrap="$JOB") || it_fail "sbatch A"
fa=$OUT/reuse-$a-a.out
wait_done "$fa"
da=$(var "$fa" IDLETIME_CKPT_DIR)
[[ $da =~ ^$ROOT/alice/$a-[0-9a-f]{16}$ ]] || it_fail "job A ($a): IDLETIME_CKPT_DIR=$da"
it_assert_eq "from job $a run 0" "$(cat "$da/marker")" "A's marker"
it_wait_state "$a" COMPLETED 30 || it_fail "job A did not complete"

lose_job_state
b=$(it_submit alice --idle-resources=only --gres=gpu:a100:1 -o "$OUT/reuse-%j-b.out" --export=ALL,HOLD=30 \
	--wrap="$JOB") || it_fail "sbatch B"
it_assert_eq "$a" "$b" "job id after the state loss (the test needs a reused id)"
fb=$OUT/reuse-$b-b.out
ic_poll 30 grep -qs '^RUN=0' "$fb" || it_fail "job B did not start: $(cat "$fb" 2>&1)"
db=$(var "$fb" IDLETIME_CKPT_DIR)
[[ $db =~ ^$ROOT/alice/$b-[0-9a-f]{16}$ ]] || it_fail "job B ($b): IDLETIME_CKPT_DIR=$db"
[ "$db" != "$da" ] || it_fail "job B got job A's directory $da"
it_assert_eq "" "$(var "$fb" MARKER)" "marker job B found in its directory"
it_assert_eq "from job $a run 0" "$(cat "$da/marker" 2>&1)" "A's marker after B started"

# Requeued, B keeps its own directory (the key survives a requeue).
scontrol requeue "$b" || it_fail "scontrol requeue $b"
it_wait_state "$b" PENDING 60 || it_fail "requeued job $b is not PENDING"
it_release_requeue_delay "$b" || it_fail "cannot reset StartTime of $b"
ic_poll 60 grep -qs '^RUN=1' "$fb" || it_fail "job B did not run again: $(cat "$fb")"
it_assert_eq "$db" "$(var "$fb" IDLETIME_CKPT_DIR)" "job B's directory after its requeue"
it_assert_eq "from job $b run 0" "$(var "$fb" MARKER)" "marker job B found after its requeue"
it_info "id $a reused: A $da, B $db (no marker of A); B requeued kept $db"
it_pass
