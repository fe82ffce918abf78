#!/bin/bash
# cluster-args: --config testsuite/cluster/sec-ckpt.json
# Root (spank/idletime in slurmstepd) names the checkpoint directory after the job's uid, never
# after SLURM_JOB_USER: alice submits with SLURM_JOB_USER=frank exported (and passed with
# --export); nothing is created for frank, alice gets <root>/alice/<jobid>-<key>, hers, 0700.
# Same for an interactive job (srun launching its own job, SLURM_JOB_USER=frank in its environment).
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

out=$(cd /tmp && timeout 60 runuser -u alice -- env -i HOME=/tmp PATH="$IC_SLURM_PATH${PREFIX:-/usr/local}/bin:/usr/bin:/bin" SLURM_CONF="$SLURM_CONF" SLURM_JOB_USER=frank \
	srun --idle-resources=only --gres=gpu:a100:1 -t 1 sh -c 'echo "JOB=$SLURM_JOB_ID DIR=$IDLETIME_CKPT_DIR $(stat -c "%U %a" "$IDLETIME_CKPT_DIR")"' 2>&1) ||
	it_fail "interactive srun: $out"
line=$(grep '^JOB=' <<<"$out")
sid=$(sed -n 's/^JOB=\([0-9]*\) .*/\1/p' <<<"$line")
[[ $line =~ ^JOB=$sid\ DIR=$ROOT/alice/$sid-[0-9a-f]{16}\ alice\ 700$ ]] || it_fail "interactive job: $out"
it_assert_eq "$before" "$(find "$ROOT/frank" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)" "entries in $ROOT/frank after the interactive job"
it_info "interactive job $sid (SLURM_JOB_USER=frank): ${line#* DIR=}"
it_pass
