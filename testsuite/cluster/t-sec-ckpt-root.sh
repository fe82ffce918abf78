#!/bin/bash
# cluster-args: --config testsuite/cluster/sec-ckpt.json
# The checkpoint root is walked from / without following symlinks, every component root-owned and
# not group/other-writable; otherwise the job starts without IDLETIME_CKPT_DIR, its stderr says
# why, slurmd's log names the path and the fix, and nothing is created anywhere:
#  (a) a sane root: the job gets <root>/alice/<jobid>-<key>, alice's, 0700, no symlink in it;
#  (b) a component owned by bob; (c) group-writable (0775) and sticky world-writable (1777);
#  (d) a component that is a symlink to a real directory: nothing is created through it;
#  (e) race: while 8 of her jobs start, alice tries in a loop to rename every entry of <root>/alice
#      and plant symlinks to a directory of bob's there (<root>/<user> is root's: every attempt must
#      fail): bob's directory stays untouched, <root>/<user> stay root's, every entry below
#      <root>/alice is alice's, every directory handed out is alice's, real, 0700.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
it_begin
# shellcheck source=sec-lib.sh
. "$(dirname "$0")/sec-lib.sh"
trap 'sec_restore_root; [ -z "${RACER:-}" ] || kill -- "-$RACER" 2>/dev/null; it_cleanup_jobs' EXIT
sec_restore_root

submit() {  # submit TAG -> job id; output in $OUT/ckpt-root-TAG-<id>.out
	it_submit alice --idle-resources=only --gres=gpu:a100:1 -o "$OUT/ckpt-root-$1-%j.out" --export=ALL,HOLD="${HOLD:-0}" \
		--wrap="$SEC_JOB" || it_fail "sbatch ($1)"
}
# refused TAG WHY: a job starts without a directory; stderr and slurmd's log say why.
refused() {
	local id f
	id=$(submit "$1")
	f=$OUT/ckpt-root-$1-$id.out
	wait_done "$f"
	[ -z "$(var "$f" IDLETIME_CKPT_DIR)" ] || it_fail "($1) job $id got $(var "$f" IDLETIME_CKPT_DIR)"
	grep -q "^idletime: no checkpoint directory (IDLETIME_CKPT_DIR unset): the site's checkpoint_root is unsafe" "$f" ||
		it_fail "($1) job $id output does not say why: $(cat "$f")"
	ic_poll 10 grep -qsF "job $id: refusing checkpoint_root $ROOT: $2; fix: " "$IC_LOGD"/slurmd-*.log ||
		it_fail "($1) no slurmd log line 'job $id: refusing checkpoint_root $ROOT: $2; fix: ...'"
	[ -z "$(find "$SEC_BASE" "$SEC_BASE.real" -name "$id-*" 2>/dev/null)" ] || it_fail "($1) job $id got a directory anyway"
	it_info "($1) job $id refused: $2"
}

# ---- (a)
rm -rf "${SEC_BASE:?}"
id=$(submit a)
f=$OUT/ckpt-root-a-$id.out
wait_done "$f"
dir=$(var "$f" IDLETIME_CKPT_DIR)
[[ $dir =~ ^$ROOT/alice/$id-[0-9a-f]{16}$ ]] || it_fail "(a) IDLETIME_CKPT_DIR=$dir"
grep -qx "DIR alice 700 directory" "$f" || it_fail "(a) $(grep ^DIR "$f")"
it_assert_eq "$dir" "$(var "$f" REAL)" "(a) realpath"
for p in "$SEC_BASE" "$ROOT"; do it_assert_eq "root 755" "$(stat -c '%U %a' "$p")" "(a) owner and mode of $p"; done
it_info "(a) job $id: $dir; $SEC_BASE and $ROOT created root 0755"

# ---- (b)
chown bob "$SEC_BASE"
refused b "$SEC_BASE is owned by uid $(id -u bob), not root"
sec_restore_root
# ---- (c)
chmod 0775 "$SEC_BASE"
refused c1 "$SEC_BASE is writable by group or others (mode 0775)"
chmod 1777 "$SEC_BASE"
refused c2 "$SEC_BASE is writable by group or others (mode 1777)"
sec_restore_root
# ---- (d)
mv "$SEC_BASE" "$SEC_BASE.real"
ln -s "$SEC_BASE.real" "$SEC_BASE"
refused d "$SEC_BASE is a symlink or not a directory"
sec_restore_root

# ---- (e)
TARGET=$IC_DIR/sec-target
rm -rf "$TARGET" && install -d -o bob -g bob -m 0777 "$TARGET"
it_assert_eq "root 755" "$(stat -c '%U %a' "$ROOT/alice")" "(e) owner and mode of $ROOT/alice"
setsid runuser -u alice -- bash -c "cd '$ROOT/alice' && n=0; while :; do for d in [0-9]*-*; do [ -e \"\$d\" ] || continue
	mv -f \"\$d\" \"x.\$d\" 2>/dev/null && echo SWAPPED \$d; ln -sfT '$TARGET' \"\$d\" 2>/dev/null && echo LINKED \$d
	ln -sfT '$TARGET' \"\$((\${d%%-*} + 1))-0000000000000000\" 2>/dev/null && echo PLANTED; done; done" >"$OUT/ckpt-root-racer.log" 2>&1 &
RACER=$!
ids=()
for i in 1 2 3 4 5 6 7 8; do ids+=("$(HOLD=2 submit e)"); done
for id in "${ids[@]}"; do wait_done "$OUT/ckpt-root-e-$id.out" 60; done
kill -- "-$RACER"; wait "$RACER" 2>/dev/null; RACER=
got=0
for id in "${ids[@]}"; do
	f=$OUT/ckpt-root-e-$id.out
	d=$(var "$f" IDLETIME_CKPT_DIR)
	[ -n "$d" ] || continue
	got=$((got + 1))
	grep -qx "DIR alice 700 directory" "$f" || it_fail "(e) job $id: $(grep ^DIR "$f")"
	it_assert_eq "$d" "$(var "$f" REAL)" "(e) realpath of job $id's directory"
done
it_assert_eq "bob 777 0" "$(stat -c '%U %a' "$TARGET") $(find "$TARGET" -mindepth 1 | wc -l)" "(e) bob's directory"
bad=$(find "$ROOT/alice" -mindepth 1 ! -user alice -printf '%p %u\n')
[ -z "$bad" ] || it_fail "(e) entries below $ROOT/alice not owned by alice: $bad"
bad=$(find "$ROOT" -mindepth 1 -maxdepth 1 ! -user root -printf '%p %u\n')
[ -z "$bad" ] || it_fail "(e) entries of $ROOT not root's: $bad"
! grep -qE '^(SWAPPED|LINKED|PLANTED)' "$OUT/ckpt-root-racer.log" ||
	it_fail "(e) alice's racer succeeded: $(grep -E '^(SWAPPED|LINKED|PLANTED)' "$OUT/ckpt-root-racer.log" | head -3)"
it_assert_eq 8 "$got" "(e) jobs that got their directory"
it_info "(e) 8 jobs under alice's swap loop: all got their own real 0700 directory; every swap failed; bob's directory untouched"
it_pass
