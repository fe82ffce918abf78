#!/bin/bash
# cluster-args: --config testsuite/cluster/sec-ckpt.json
# Retention (idle.checkpoint_retention = 40 s in sec-ckpt.json), done by the EpilogSlurmctld hook:
#  job E ended, its directory older than the retention and holding a symlink (to a directory of
#  files) and a symlink to a file planted by the job: removed, the symlinks' targets untouched;
#  job R running and job P pending (requeued), both with directories as old: kept;
#  job F ended a moment ago: kept. The sweep is triggered by the end of another job.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
it_begin
# shellcheck source=sec-lib.sh
. "$(dirname "$0")/sec-lib.sh"
sec_restore_root
KEEP=$IC_DIR/sec-keep
rm -rf "$KEEP" && install -d -o alice -g alice -m 0755 "$KEEP" && echo precious >"$KEEP/file" && chown alice "$KEEP/file"
PLANT='d=$IDLETIME_CKPT_DIR; mkdir -p "$d/sub/deeper"; echo x >"$d/sub/deeper/f"; echo y >"$d/ckpt"
ln -s "'"$KEEP"'" "$d/link"; ln -s "'"$KEEP"'/file" "$d/sub/flink"; echo "IDLETIME_CKPT_DIR=$d"; sleep ${HOLD:-0}; echo DONE'
submit() {  # submit TAG HOLD
	it_submit alice --idle-resources=only --gres=gpu:a100:1 -o "$OUT/retention-$1-%j.out" --export=ALL,HOLD="$2" \
		--wrap="$PLANT" || it_fail "sbatch ($1)"
}
dir_of() {  # dir_of TAG ID
	wait_done "$OUT/retention-$1-$2.out" "${3:-30}"
	var "$OUT/retention-$1-$2.out" IDLETIME_CKPT_DIR
}
e=$(submit e 0); de=$(dir_of e "$e")
p=$(submit p 0); dp=$(dir_of p "$p")
it_wait_state "$p" COMPLETED 30 || it_fail "job P did not complete"
scontrol requeue "$p" || it_fail "scontrol requeue $p"
it_wait_state "$p" PENDING 30 || it_fail "requeued job $p is not PENDING"
r=$(submit r 600)
ic_poll 30 grep -qs '^IDLETIME_CKPT_DIR=' "$OUT/retention-r-$r.out" || it_fail "job R did not start"
dr=$(var "$OUT/retention-r-$r.out" IDLETIME_CKPT_DIR)
it_wait_state "$e" COMPLETED 30 || it_fail "job E did not complete"
f=$(submit f 0); df=$(dir_of f "$f")
it_wait_state "$f" COMPLETED 30 || it_fail "job F did not complete"
for d in "$de" "$dp" "$dr" "$df"; do [ -d "$d" ] || it_fail "no directory $d"; done
sleep 2  # let the hooks of E, P and F finish touching their directories
# E, P and R look old (an hour); the last sweep too, so the next job end sweeps.
touch -h -d '-1 hour' "$de" "$dp" "$dr" "$ROOT/.idletime-retention"
t=$(it_submit alice -p quota-team-a --gres=gpu:1 -o "$OUT/retention-t-%j.out" --wrap=true) || it_fail "sbatch (t)"
ic_poll 30 sh -c "[ ! -e '$de' ]" || it_fail "job E's directory $de still there after job $t ended: $(ls -la "$de" 2>&1 | head -5)"
it_assert_eq "precious alice" "$(cat "$KEEP/file") $(stat -c %U "$KEEP/file")" "target of E's symlinks"
for d in "$dp" "$dr" "$df"; do [ -d "$d" ] && [ -f "$d/ckpt" ] || it_fail "directory $d was removed"; done
ic_poll 10 grep -qs "checkpoint retention: removed [1-9]" "$IC_LOGD/ft-hook.log" || it_fail "no removal in ft-hook.log"
it_info "ended $e: $de removed (symlinks not followed); pending $p, running $r, fresh $f kept"
it_pass
