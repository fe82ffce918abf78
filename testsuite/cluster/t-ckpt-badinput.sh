#!/bin/bash
# Bad input to the checkpoint library inside real Slurm jobs (bench/reclaim/jobs/ckpt_cases.py):
# missing parent, unwritable directory, full disk (a 2 MiB tmpfs), corrupted manifest and data
# file, checkpoints copied from bob's jobs (one signed by bob for alice's job id), and a directory
# bob planted for alice's next job id under the checkpoint root. Each case needs a clear one-line
# error (or a logged skip), no partial checkpoint on disk, and the process alive (exit 0);
# the planted directory (the old <root>/<user>/<jobid> name) is never handed out by spank/idletime
# (the job gets its own <jobid>-<key> directory), is refused by the library, and is left untouched.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=../../bench/reclaim/lib.sh
. "$IC_SRC/../../bench/reclaim/lib.sh"
it_begin
rc_env || it_fail "idletime is not installed in $RC_PREFIX"
CASES=$RC_JOBS/ckpt_cases.py
B=$IC_DIR/badinput
cleanup() {
	mountpoint -q "$B/full" && umount "$B/full"
	rm -rf "$B" "${planted:-}"
	it_cleanup_jobs
}
trap cleanup EXIT
mountpoint -q "$B/full" && umount "$B/full"
rm -rf "$B"
mkdir -p "$B" && chmod 755 "$B"
install -d -o alice -g alice -m 500 "$B/unwritable"
install -d -o alice -g alice -m 700 "$B/full" "$B/corrupt" "$B/copied"
install -d -o bob -g bob -m 700 "$B/bob"
mount -t tmpfs -o size=2m,mode=0700,uid="$(id -u alice)",gid="$(id -g alice)" idletime-ckpt-full "$B/full" || it_fail "cannot mount a tmpfs on $B/full"
conf=$(sed -n 's/.*spank_idletime.so config=\([^ ]*\).*/\1/p' "$IC_ETC/plugstack.conf")
root=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["idle"]["checkpoint_root"])' "$conf") || it_fail "no checkpoint_root in $conf"

# Two held jobs of alice, so their ids are known before they run.
a=$(it_submit alice -J badinput --hold --quota=team-a "$CASES" check --missing "$B/no-such-dir/ckpt" \
	--unwritable "$B/unwritable" --full "$B/full" --corrupt "$B/corrupt" --copied "$B/copied") || it_fail "sbatch badinput"
p=$(it_submit alice -J planted --hold --idle-resources=only --quota=team-a "$CASES" check --env \
	--planted "$root/alice/{job}") || it_fail "sbatch planted"
planted=$root/alice/$p
# bob's checkpoints: one of his own job, one signed for alice's job $a, one for alice's job $p.
b=$(it_submit bob -J bob-saves --quota=team-b --wrap "/usr/bin/python3 $CASES save $B/bob 5 && /usr/bin/python3 $CASES save $B/bob 6 --job-id $a && /usr/bin/python3 $CASES save $B/bob 7 --job-id $p") || it_fail "sbatch bob"
it_wait_state "$b" "COMPLETED|FAILED" 120 || it_fail "bob's job $b did not end"
it_assert_eq COMPLETED "$(it_job_field "$b" JobState)" "bob's job $b ($(tr '\n' '|' <"$(rc_out bob-saves "$b")"))"
cp -a "$B/bob/step-000000000005" "$B/bob/step-000000000006" "$B/copied/" && chown -R alice:alice "$B/copied"
# The plant: <root>/alice/<p> owned by bob with bob's checkpoint for job $p.
# (never chown the root itself: spank/idletime refuses a checkpoint_root that is not root's)
mkdir -p "$root/alice"
{ install -d -o bob -g bob -m 700 "$planted" && cp -a "$B/bob/step-000000000007" "$planted/"; } || it_fail "cannot plant $planted"
before=$(find "$planted" -printf '%p %u %s\n' | sort | md5sum)
echo "  planted $planted (owner $(stat -c %U "$planted")) for alice's job $p"
scontrol release "$a" "$p" || it_fail "cannot release $a $p"
for id in "$a" "$p"; do
	it_wait_state "$id" "COMPLETED|FAILED|CANCELLED" 120 || it_fail "job $id did not end"
done
out=$(rc_out badinput "$a")
sed 's/^/    /' "$out"
grep -q '^alive$' "$out" || it_fail "badinput job $a did not survive its errors: $(tail -n3 "$out" | tr '\n' '|')"
! grep -q ' FAIL ' "$out" || it_fail "badinput job $a: $(grep ' FAIL ' "$out" | tr '\n' '|')"
for c in missing unwritable unwritable-nothing-left full-sync full-async full-latest full-recovers corrupt copied-refused copied-own-works; do
	grep -q "^case $c ok " "$out" || it_fail "badinput job $a: no 'case $c ok'"
done
it_assert_eq "0:0" "$(it_job_field "$a" ExitCode)" "exit code of badinput job $a"
left=$(find "$B/full" "$B/unwritable" -name '.tmp*' | wc -l)
it_assert_eq 0 "$left" "partial .tmp entries left on the full tmpfs / unwritable dir"
it_assert_eq "step-000000000001 step-000000000004 " "$(ls "$B/full" | tr '\n' ' ')" "checkpoints on the full tmpfs"
pout=$(rc_out planted "$p")
sed 's/^/    /' "$pout"
grep -q '^case env-own ok ' "$pout" || it_fail "planted job $p: spank/idletime did not give the job its own directory: $(tr '\n' '|' <"$pout")"
grep -q '^case planted ok .*owned by uid' "$pout" || it_fail "planted job $p: library did not refuse the plant: $(tr '\n' '|' <"$pout")"
it_assert_eq "$before" "$(find "$planted" -printf '%p %u %s\n' | sort | md5sum)" "planted directory after the job"
it_pass
