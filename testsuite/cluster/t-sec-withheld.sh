#!/bin/bash
# cluster-args: --config testsuite/sched/data/sched16.json --extra-conf testsuite/sched/data/sched-slurm.conf
# timeout: 600
# preempt/idletime: withholding the checkpoint time protects nothing (issue 11 item 6). Per round,
# two 8-GPU idle-time jobs of bob fill the 16-GPU node n16-1: P publishes a valid checkpoint time
# (its owner writes "idletime:ckpt=<now>" into the Comment, the channel libidletime-ckpt uses);
# W does not publish (a), replaced its Comment with its own text (b), claims a time before its
# start (c) or in the future (d), written 2 s after P published. W started first and ran longer,
# so before the fix (a), (b) and (c) looked like "more work to lose" and P was preempted instead.
# (job_submit/idletime now records a claim far from the time it is written as written now.) A guaranteed 8-GPU job
# of carol (team-c, pool p16) then needs exactly one victim: it must be W, and P keeps running.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
scontrol show config | grep -q '^PreemptType *= *preempt/idletime' && scontrol show partition idle-p16 >/dev/null 2>&1 ||
	it_fail "needs the sched cluster (sched16.json + sched-slurm.conf, see testsuite/sched/README)"
it_begin
SLEEP=$IT_JOBS_DIR/sleep.sh
as_bob_comment() { runuser -u bob -- env SLURM_CONF="$SLURM_CONF" scontrol update jobid="$1" comment="$2"; }

round() { # NAME W-COMMENT-KIND
	local name=$1 kind=$2 w p owner wstart now
	w=$(it_submit bob -J "withheld-$name" --idle-resources=only --quota=team-b --gres=gpu:8 -c 1 -w n16-1 "$SLEEP" 3600) ||
		it_fail "($name) sbatch W"
	it_wait_state "$w" RUNNING 60 || it_fail "($name) W $w did not start"
	sleep 2 # W is the older job: under a "since start" rule it has more work to lose
	p=$(it_submit bob -J "publisher-$name" --idle-resources=only --quota=team-b --gres=gpu:8 -c 1 -w n16-1 "$SLEEP" 3600) ||
		it_fail "($name) sbatch P"
	it_wait_state "$p" RUNNING 60 || it_fail "($name) P $p did not start"
	sleep 3
	wstart=$(date -d "$(it_job_field "$w" StartTime)" +%s)
	as_bob_comment "$p" "idletime:ckpt=$(date +%s)" || it_fail "($name) Comment update of P"
	sleep 2 # P's checkpoint is 2 s old (16 GPU-seconds at stake); W's run is older than that
	now=$(date +%s)
	case $kind in
	none) ;;
	text) as_bob_comment "$w" "please do not preempt me" || it_fail "($name) Comment update of W" ;;
	before) as_bob_comment "$w" "idletime:ckpt=$((wstart - 3600))" || it_fail "($name) Comment update of W" ;;
	future) as_bob_comment "$w" "idletime:ckpt=$((now + 86400))" || it_fail "($name) Comment update of W" ;;
	esac
	owner=$(it_submit carol -J "owner-$name" --quota=team-c --idle-resources=none --gres=gpu:8 -c 1 "$SLEEP" 600) ||
		it_fail "($name) sbatch of the guaranteed job"
	it_wait_state "$owner" RUNNING 120 || it_fail "($name) guaranteed job $owner did not start: $(it_job_field "$owner" Reason)"
	local wr pr
	wr=$(it_job_field "$w" Restarts) pr=$(it_job_field "$p" Restarts)
	it_info "($name) W $w comment='$(it_job_field "$w" Comment)' restarts=$wr; P $p restarts=$pr state=$(it_job_field "$p" JobState)"
	[ "$pr" = 0 ] || it_fail "($name) the publishing job $p was preempted; W $w (restarts $wr) was favoured"
	[ "$wr" != 0 ] || it_fail "($name) W $w was not preempted (restarts $wr)"
	it_assert_eq RUNNING "$(it_job_field "$p" JobState)" "($name) state of the publishing job $p"
	it_cleanup_jobs || it_fail "($name) cleanup"
}

round a none
round b text
round c before
round d future
it_pass
