#!/bin/bash
# Issue 11 item 5: a munge outage is not a forged checkpoint. alice's training job
# (train_digits.py) runs to the end with checkpoints; it is requeued with IDLETIME_MUNGE_SOCKET
# pointing at a socket nobody listens on (munged down / wrong socket). That run must stop with a
# one-line error naming munge and the fix, exit 69 (job FAILED), never print "fresh" (training
# again from step 0) and leave the checkpoint directory byte-for-byte as it was. Requeued once
# more with the cluster's munged, it resumes from the newest saved step and completes, with the
# same final parameters as the first run.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=../../bench/reclaim/lib.sh
. "$IC_SRC/../../bench/reclaim/lib.sh"
it_begin
rc_env || it_fail "idletime is not installed in $RC_PREFIX"
D=$IC_DIR/sec-munge
trap 'rm -rf "$D"; it_cleanup_jobs' EXIT
rm -rf "$D"
install -d -o alice -g alice -m 700 "$D"
STEPS=300
# The socket of each run comes from $D/socket (empty: the cluster's munged from the environment).
id=$(it_submit alice -J sec-munge --quota=team-a --requeue --open-mode=append -t 10 --wrap "
s=\$(cat $D/socket 2>/dev/null); [ -n \"\$s\" ] && export IDLETIME_MUNGE_SOCKET=\$s
echo \"run restart=\${SLURM_RESTART_COUNT:-0} socket=\$IDLETIME_MUNGE_SOCKET\"
/usr/bin/python3 ${PYTHONPATH%%:*}/idletime/examples/train_digits.py --steps $STEPS --ckpt-every 50 \
	--ckpt-dir $D/ck --out $D/params.\${SLURM_RESTART_COUNT:-0} 2>&1
rc=\$?; echo \"exit \$rc\"; exit \$rc") || it_fail "sbatch"
out=$(rc_out sec-munge "$id")
it_wait_state "$id" "COMPLETED|FAILED|CANCELLED|TIMEOUT" 300 || it_fail "run 1 of job $id did not end"
it_assert_eq COMPLETED "$(it_job_field "$id" JobState)" "run 1 of job $id ($(tail -n3 "$out" | tr '\n' '|'))"
last=$(grep '^saved ' "$out" | tail -n1 | awk '{print $2}')
it_assert_eq 250 "$last" "newest checkpoint of run 1"
snap() { (cd "$D/ck" && find . -printf '%p %s %T@\n' | sort && cat ./*/MANIFEST.json) | md5sum; }
before=$(snap)

# Run 2: munged unreachable.
echo "$D/no-munged/socket" >"$D/socket" && chown alice "$D/socket"
scontrol requeue "$id" || it_fail "scontrol requeue $id"
it_release_requeue_delay "$id" || it_fail "cannot release the requeue delay of $id"
it_wait_field "$id" Restarts 1 30 || it_fail "job $id not requeued"
it_wait_state "$id" "COMPLETED|FAILED|CANCELLED|TIMEOUT" 120 || it_fail "run 2 of job $id did not end"
run2=$(sed -n '/^run restart=1 /,$p' "$out")
echo "$run2" | sed 's/^/    /'
it_assert_eq FAILED "$(it_job_field "$id" JobState)" "run 2 (munge down) of job $id"
it_assert_eq "exit 69" "$(echo "$run2" | grep '^exit ')" "exit status of run 2"
! echo "$run2" | grep -qE '^(fresh|resumed|saved)' || it_fail "run 2 trained without its checkpoints: $(echo "$run2" | grep -E '^(fresh|resumed|saved)' | head -n1)"
msg=$(echo "$run2" | grep '^idletime/train: ')
[ "$(echo "$msg" | wc -l)" = 1 ] || it_fail "run 2: expected one idletime/train line, got: $msg"
echo "$msg" | grep -q 'munge unavailable' && echo "$msg" | grep -q 'IDLETIME_MUNGE_SOCKET' ||
	it_fail "run 2's message names neither the cause nor the fix: $msg"
! echo "$run2" | grep -q 'skipping checkpoint' || it_fail "run 2 judged checkpoints while munge was down"
it_assert_eq "$before" "$(snap)" "checkpoint directory after run 2"

# Run 3: munged back.
: >"$D/socket"
scontrol requeue "$id" || it_fail "scontrol requeue $id (2)"
it_release_requeue_delay "$id" || it_fail "cannot release the requeue delay of $id (2)"
it_wait_field "$id" Restarts 2 30 || it_fail "job $id not requeued (2)"
it_wait_state "$id" "COMPLETED|FAILED|CANCELLED|TIMEOUT" 120 || it_fail "run 3 of job $id did not end"
run3=$(sed -n '/^run restart=2 /,$p' "$out")
it_assert_eq COMPLETED "$(it_job_field "$id" JobState)" "run 3 of job $id ($(echo "$run3" | tail -n3 | tr '\n' '|'))"
it_assert_eq "resumed 250" "$(echo "$run3" | grep -E '^(fresh|resumed)')" "run 3 start"
cmp -s "$D/params.0" "$D/params.2" || it_fail "final parameters of run 3 (resumed) differ from run 1's"
it_info "job $id: run 2 stopped with: $msg"
it_pass
