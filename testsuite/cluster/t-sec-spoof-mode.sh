#!/bin/bash
# cluster-args: --config testsuite/cluster/sec-ckpt.json
# Spoofed idletime variables never make root act for another user:
#  (a) a plain (non-idletime) job of alice whose srun steps carry SLURM_SPANK_IDLETIME_MODE=only,
#      IDLETIME_MODE/IDLETIME_IDLE_RESOURCES=only, SLURM_SPANK_IDLETIME_JOB_KEY and SLURM_JOB_USER=frank,
#      and a step run with --idle-resources=only: nothing is created for frank; whatever a step
#      gets is alice's own directory below <root>/alice;
#  (b) the same variables (but IDLETIME_IDLE_RESOURCES, the option's own fallback) exported at
#      sbatch of a plain job: nothing for frank either.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
it_begin
# shellcheck source=sec-lib.sh
. "$(dirname "$0")/sec-lib.sh"
sec_restore_root
SPOOF="SLURM_SPANK_IDLETIME_MODE=only IDLETIME_MODE=only IDLETIME_IDLE_RESOURCES=only SLURM_SPANK_IDLETIME_JOB_KEY=00000000deadbeef SLURM_JOB_USER=frank"
frank_entries() { find "$ROOT/frank" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
check_frank() {
	it_assert_eq "$1" "$(frank_entries)" "entries in $ROOT/frank after $2"
	if [ -e "$ROOT/frank" ]; then
		[ "$(stat -c %U "$ROOT/frank")" = frank ] || it_fail "$ROOT/frank owned by $(stat -c %U "$ROOT/frank") after $2"
	fi
}
before=$(frank_entries)

# ---- (a) steps of a plain job
STEPS="for i in 1 2; do env $SPOOF srun -n1 sh -c 'echo STEP \$SLURM_STEP_ID CKPT=\$IDLETIME_CKPT_DIR'; done
srun -n1 --idle-resources=only sh -c 'echo STEP opt CKPT=\$IDLETIME_CKPT_DIR'
echo DONE"
id=$(it_submit alice -p quota-team-a --gres=gpu:1 -o "$OUT/spoof-mode-a-%j.out" --wrap="$STEPS") || it_fail "sbatch (a)"
f=$OUT/spoof-mode-a-$id.out
wait_done "$f" 60
[ "$(grep -c '^STEP' "$f")" = 3 ] || it_fail "expected 3 steps in $f: $(cat "$f")"
check_frank "$before" "spoofed steps of job $id"
# A step may get a directory, but only alice's own.
for d in $(sed -n 's/^STEP .* CKPT=//p' "$f"); do
	[[ $d == "$ROOT/alice/"* ]] || it_fail "step of job $id got $d, outside $ROOT/alice"
	[ "$(stat -c %U "$d")" = alice ] || it_fail "$d is not alice's"
done
[ -z "$(find "$ROOT" -mindepth 2 -maxdepth 2 -name "$id-*" ! -path "$ROOT/alice/*")" ] ||
	it_fail "job $id has directories outside alice's: $(find "$ROOT" -name "$id-*")"
it_info "(a) plain job $id, spoofed steps: nothing for frank ($(grep -c 'CKPT=/' "$f") step(s) got an own dir of alice)"

# ---- (b) at sbatch (IDLETIME_IDLE_RESOURCES there is the real option's fallback: left out)
id=$(IT_SUBMIT_ENV="${SPOOF/IDLETIME_IDLE_RESOURCES=only /}" it_submit alice -p quota-team-a --gres=gpu:1 -o "$OUT/spoof-mode-b-%j.out" \
	--wrap='echo "CKPT=$IDLETIME_CKPT_DIR"; echo DONE') || it_fail "sbatch (b)"
f=$OUT/spoof-mode-b-$id.out
wait_done "$f"
check_frank "$before" "spoofed sbatch of job $id"
d=$(sed -n 's/^CKPT=//p' "$f")
[ -z "$d" ] || [[ $d == "$ROOT/alice/"* ]] || it_fail "job $id got $d, outside $ROOT/alice"
it_info "(b) plain job $id submitted with spoofed variables: nothing for frank (CKPT=${d:-unset})"
it_pass
