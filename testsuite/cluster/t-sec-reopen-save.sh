#!/bin/bash
# Issue 11 item 4: opening a checkpoint directory never deletes another live writer's save.
# One job of alice saves 6 checkpoints of 192 MiB asynchronously (keep_last 2) while two other
# processes of the job open the same directory in a loop, as a monitoring script or another
# rank would (each open used to remove every .tmp-* entry, i.e. the save in progress). Asserts:
# every save succeeds ("saved 1".."saved 6", exit 0), the reopen loops saw the saves' temporaries
# and never an error, latest() was always a complete step and never went back, and afterwards
# latest() is 6, every committed step verifies and no temporary is left.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=../../bench/reclaim/lib.sh
. "$IC_SRC/../../bench/reclaim/lib.sh"
it_begin
rc_env || it_fail "idletime is not installed in $RC_PREFIX"
JOB=$IC_SRC/jobs/reopen_save.py
D=$IC_DIR/sec-reopen
trap 'rm -rf "$D"; it_cleanup_jobs' EXIT
rm -rf "$D"
install -d -o alice -g alice -m 700 "$D"
id=$(it_submit alice -J sec-reopen --quota=team-a -t 10 --wrap "
/usr/bin/python3 $JOB save $D/ck 6 192 & saver=\$!
/usr/bin/python3 $JOB reopen $D/ck $D/stop & r1=\$!
/usr/bin/python3 $JOB reopen $D/ck $D/stop & r2=\$!
wait \$saver; s=\$?
touch $D/stop
wait \$r1; a=\$?
wait \$r2; b=\$?
echo \"rc saver=\$s reopen=\$a,\$b\"
[ \$s = 0 ] && [ \$a = 0 ] && [ \$b = 0 ]") || it_fail "sbatch"
it_wait_state "$id" "COMPLETED|FAILED|CANCELLED|TIMEOUT" 300 || it_fail "job $id did not end"
out=$(rc_out sec-reopen "$id")
sed 's/^/    /' "$out"
it_assert_eq "saved 1 saved 2 saved 3 saved 4 saved 5 saved 6 " "$(grep '^saved ' "$out" | tr '\n' ' ')" "saves of job $id"
! grep -q 'reopen error' "$out" || it_fail "a reopen failed: $(grep 'reopen error' "$out" | head -n1)"
it_assert_eq 2 "$(grep -c '^reopen n=' "$out")" "reopen loops that finished"
during=$(sed -n 's/^reopen n=[0-9]* during=\([0-9]*\) .*/\1/p' "$out" | awk '{ s += $1 } END { print s + 0 }')
[ "$during" -gt 0 ] || it_fail "no reopen overlapped a save in progress (the test proves nothing)"
it_assert_eq "0:0" "$(it_job_field "$id" ExitCode)" "exit code of job $id"
left=$(find "$D/ck" -mindepth 1 -maxdepth 1 -name '.*' | wc -l)
it_assert_eq 0 "$left" "temporaries left in $D/ck"
# Outside the job, as alice, bound to its job id: the newest is 6 and every kept step verifies.
check=$(runuser -u alice -- env PYTHONPATH="$PYTHONPATH" IDLETIME_CKPT_LIB="$IDLETIME_CKPT_LIB" \
	IDLETIME_MUNGE_SOCKET="$IC_SOCK" /usr/bin/python3 -c '
import os, sys
from idletime import Checkpointer
d, job = sys.argv[1], sys.argv[2]
with Checkpointer(d, job_id=job) as ck:
    steps = sorted(int(n[5:]) for n in os.listdir(d) if n.startswith("step-"))
    for s in steps:
        assert ck.read(s, "meta.txt") == b"step %d" % s, s
        assert dict(ck.files(s))["state.bin"] == 192 << 20, s
    print(ck.latest()[0], ",".join(map(str, steps)))
' "$D/ck" "$id" 2>&1) || it_fail "verifying the checkpoints failed: $check"
it_assert_eq "6 5,6" "$check" "latest and committed steps after the job"
it_info "job $id: $(grep '^reopen n=' "$out" | tr '\n' ' ')"
it_pass
