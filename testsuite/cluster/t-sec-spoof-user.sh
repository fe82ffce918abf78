#!/bin/bash
# cluster-args: --config testsuite/cluster/sec-ckpt.json
# Root (spank/idletime in slurmstepd) names the checkpoint directory after the job's uid, never
# after SLURM_JOB_USER: alice submits with SLURM_JOB_USER=frank exported (and passed with
# --export); nothing is created for frank, alice gets <root>/alice/<jobid>-<key>, hers, 0700.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
it_begin
# shellcheck source=sec-lib.sh
. "$(dirname "$0")/sec-lib.sh"
sec_restore_root
before=$(find "$ROOT/frank" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
id=$(IT_SUBMIT_ENV="SLURM_JOB_USER=frank USER=frank LOGNAME=frank" it_submit alice --idle-resources=only \
	--gres=gpu:a100:1 --export=ALL,SLURM_JOB_USER=frank -o "$OUT/spoof-user-%j.out" --wrap="$SEC_JOB") ||
	it_fail "sbatch"
f=$OUT/spoof-user-$id.out
wait_done "$f"
dir=$(var "$f" IDLETIME_CKPT_DIR)
[[ $dir =~ ^$ROOT/alice/$id-[0-9a-f]{16}$ ]] || it_fail "IDLETIME_CKPT_DIR=$dir, want $ROOT/alice/$id-<16 hex digits>"
grep -qx "DIR alice 700 directory" "$f" || it_fail "checkpoint dir not alice's 0700: $(grep ^DIR "$f")"
it_assert_eq "$dir" "$(var "$f" REAL)" "realpath of the checkpoint dir"
after=$(find "$ROOT/frank" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
it_assert_eq "$before" "$after" "entries in $ROOT/frank"
if [ -e "$ROOT/frank" ]; then
	owner=$(stat -c %U "$ROOT/frank")
	[ "$owner" = frank ] || it_fail "$ROOT/frank exists owned by $owner"
fi
[ -z "$(find "$ROOT" -name "$id" -o -name "$id-*" | grep -v "^$ROOT/alice/")" ] ||
	it_fail "job $id has directories outside alice's: $(find "$ROOT" -name "$id*")"
it_info "job $id (SLURM_JOB_USER=frank): $dir, nothing for frank"
it_pass
