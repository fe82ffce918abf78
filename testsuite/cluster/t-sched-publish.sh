#!/bin/bash
# cluster-args: --config testsuite/sched/data/sched16.json --extra-conf testsuite/sched/data/sched-slurm.conf
# libidletime-ckpt publishes each durable checkpoint's time in the job's Comment
# ("idletime:ckpt=<unix time>", other Comment text kept), the channel preempt/idletime reads.
# A real job saves two checkpoints through the Python binding; the Comment follows.
# Env: IDLETIME_PREFIX (install prefix with lib/ and python, default /usr/local).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# Checked before it_begin (which cancels every job): the sched cluster, IDLETIME_CONFIG=testsuite/sched/data/sched16.json and start.sh
# --config testsuite/sched/data/sched16.json --extra-conf testsuite/sched/data/sched-slurm.conf
scontrol show config | grep -q '^PreemptType *= *preempt/idletime' && scontrol show partition idle-p16 >/dev/null 2>&1 ||
	it_fail "needs the sched cluster (sched16.json + sched-slurm.conf, see testsuite/sched/README)"
it_begin
PREFIX=${IDLETIME_PREFIX:-/usr/local}
PY=$(it_python_dir "$PREFIX")
[ -n "$PY" ] && [ -d "$PY/idletime" ] || it_fail "no idletime Python package in \"$PY\" (idletime-ckpt.pc under $PREFIX; make install?)"
dir=$IC_DIR/out/publish-ckpt
rm -rf "$dir"
script=$IC_DIR/out/publish.py
cat >"$script" <<PYEOF
import os, sys, time
sys.path.insert(0, "$PY")
from idletime.ckpt import Checkpointer
c = Checkpointer("$dir")
c.save(1, {"w": b"x" * 1000})
print("saved 1 at", int(time.time()), flush=True)
time.sleep(8)
c.save(2, {"w": b"y" * 1000}, asynchronous=True)
c.wait()
print("saved 2 at", int(time.time()), flush=True)
time.sleep(600)
PYEOF
chmod 644 "$script"
id=$(it_submit alice -J publish --idle-resources=only --quota=team-a --gres=gpu:1 -c 1 --comment="keep-me" \
	--export=ALL,IDLETIME_CKPT_LIB="$PREFIX/lib/libidletime-ckpt.so.0",IDLETIME_MUNGE_SOCKET="$IC_SOCK" \
	--wrap="exec /usr/bin/python3 $script") || it_fail "sbatch"
it_wait_state "$id" RUNNING 60 || it_fail "job $id did not start"
start=$(date -d "$(it_job_field "$id" StartTime)" +%s)
comment_ckpt() { scontrol show job "$id" | sed -n 's/^ *Comment=//p' | grep -o 'idletime:ckpt=[0-9]*' | cut -d= -f2; }
deadline=$(($(date +%s) + 30))
while [ -z "$(comment_ckpt)" ] && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.5; done
t1=$(comment_ckpt)
[ -n "$t1" ] || it_fail "Comment of $id never got a checkpoint time: '$(scontrol show job "$id" | sed -n 's/^ *Comment=//p')' out: $(cat "$IC_DIR/out/publish-$id.out")"
[ "$t1" -ge "$start" ] && [ "$t1" -le "$(date +%s)" ] || it_fail "first claim $t1 not within [start $start, now]"
comment=$(scontrol show job "$id" | sed -n 's/^ *Comment=//p')
[[ $comment == *keep-me* ]] || it_fail "the Comment lost its other text: '$comment'"
deadline=$(($(date +%s) + 40))
while [ "$(comment_ckpt)" = "$t1" ] && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.5; done
t2=$(comment_ckpt)
[ "$t2" -ge $((t1 + 5)) ] || it_fail "second checkpoint not published (claim $t2 after $t1)"
it_info "job $id: Comment '$(scontrol show job "$id" | sed -n 's/^ *Comment=//p')' (start $start, claims $t1 then $t2)"
it_pass
