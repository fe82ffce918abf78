# shellcheck shell=bash
# Helpers of the t-sec-* tests (cluster: testsuite/cluster/sec-ckpt.json, whose checkpoint_root
# /var/spool/idletime-sec-test/checkpoints is theirs alone; retention 40 s).
SEC_BASE=/var/spool/idletime-sec-test
# The checkpoint_root of the config spank/idletime runs with on this cluster.
sec_root() { jq -r .idle.checkpoint_root "$(sed -n 's/.*spank_idletime.so.*config=\([^ ]*\).*/\1/p' "$IC_ETC/plugstack.conf")"; }
ROOT=$(sec_root)
[ "$ROOT" = "$SEC_BASE/checkpoints" ] ||
	it_fail "cluster runs with checkpoint_root $ROOT, not $SEC_BASE/checkpoints (start it with --config testsuite/cluster/sec-ckpt.json)"
# Outputs per test run: t-sec-jobid-reuse restarts job ids at FirstJobId, so %j names repeat.
OUT=$IC_DIR/out/$IT_NAME.$$
mkdir -p "$OUT" && chmod 1777 "$IC_DIR/out" "$OUT"
# Puts the test root back the way a site has it: real directories, root-owned, 0755.
sec_restore_root() {
	if [ -L "$SEC_BASE" ]; then rm -f "$SEC_BASE"; fi
	if [ -d "$SEC_BASE.real" ] && [ ! -e "$SEC_BASE" ]; then mv "$SEC_BASE.real" "$SEC_BASE"; fi
	mkdir -p "$SEC_BASE"
	chown root:root "$SEC_BASE"
	chmod 0755 "$SEC_BASE"
}
# var FILE NAME: last value of NAME=... in FILE.
var() { sed -n "s/^$2=//p" "$1" | tail -n1; }
# Job script: IDLETIME_CKPT_DIR and what it is, then DONE.
SEC_JOB='echo "IDLETIME_CKPT_DIR=$IDLETIME_CKPT_DIR"; [ -n "$IDLETIME_CKPT_DIR" ] && stat -c "DIR %U %a %F" "$IDLETIME_CKPT_DIR" && echo "REAL=$(realpath "$IDLETIME_CKPT_DIR")"; sleep ${HOLD:-0}; echo DONE'
# wait_done FILE: the job printed DONE.
wait_done() { ic_poll "${2:-30}" grep -qs '^DONE' "$1" || it_fail "job output $1 incomplete: $(cat "$1" 2>&1)"; }
