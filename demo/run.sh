#!/bin/bash
# The idletime demo scenario on a running local cluster (see scripts/demo.sh, which starts it).
# Two teams share one A100 pool (etc/demo.json: 2 nodes x 4 GPUs; team-a and team-b 4 GPUs each).
#  1. team-a (alice): an `acceptable` job starts In Quota; two `only` training jobs borrow team-b's
#     idle GPUs; a job with a retryable failure restarts.
#  2. team-b (bob) submits guaranteed work with a plain sbatch (no -p: his quota): an idle-time job
#     gets the notice, checkpoints, releases its GPUs at once and is requeued; bob's job starts
#     within seconds.
#  3. Everything finishes; the preempted job resumed from its checkpoint and its final model is
#     bitwise equal to an uninterrupted run.
# Exit 0 only if every one of those things happened. Usage: demo/run.sh (root; SLURM_CONF set).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
PREFIX=${PREFIX:-/usr/local}
IDLETIME=${IDLETIME:-$PREFIX/bin/idletime}
CONFIG=${DEMO_CONFIG:-$here/../etc/demo.json}
OUT=${DEMO_OUT_DIR:-/var/tmp/idletime-demo-out}
TRAIN=${DEMO_TRAIN:-$here/../python/idletime/examples/train_digits.py}
STEPS=${DEMO_STEPS:-500}
export IDLETIME_CONFIG=$CONFIG
export IDLETIME_EXEC_PATH=${IDLETIME_EXEC_PATH:-$PREFIX/libexec/idletime}
# The checkpoint library as installed (found without ldconfig for non-default prefixes).
export IDLETIME_CKPT_LIB=${IDLETIME_CKPT_LIB:-$PREFIX/lib/libidletime-ckpt.so.0}
failures=()

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
check() {  # check "what" CONDITION...
    local what=$1; shift
    if "$@"; then echo "  ok: $what"; else echo "  FAILED: $what"; failures+=("$what"); fi
}
field() { scontrol show job -o "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1; }
wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...: poll every 0.5 s
    local deadline=$((SECONDS + $1)) what=$2; shift 2
    until "$@"; do
        [ $SECONDS -lt $deadline ] || { echo "  timed out after waiting for: $what"; return 1; }
        sleep 0.5
    done
}
state_is() { [ "$(field "$1" JobState)" = "$2" ]; }
gone_or_done() { local s; s=$(field "$1" JobState); [ "$s" = COMPLETED ] || [ -z "$s" ]; }
submit() {  # submit USER NAME SBATCH-ARGS... -> job id
    local user=$1 name=$2; shift 2
    runuser -u "$user" -- env -i PATH=/usr/bin:/bin HOME=/tmp SLURM_CONF="$SLURM_CONF" \
        sbatch --parsable --open-mode=append -J "$name" -o "$OUT/$name-%j.out" -D /tmp "$@" | cut -d';' -f1
}
views() {
    say "idletime jobs  ($1)"; "$IDLETIME" jobs --config="$CONFIG" || failures+=("idletime jobs")
    say "idletime quota ($1)"; "$IDLETIME" quota --config="$CONFIG" || failures+=("idletime quota")
}

rm -rf "$OUT"; mkdir -p "$OUT"; chmod 1777 "$OUT"
[ -n "${SLURM_CONF:-}" ] || { echo "demo: SLURM_CONF is not set (start the cluster first)" >&2; exit 2; }

say "reference: the same training run, uninterrupted, outside Slurm"
ref_dir=$(mktemp -d); chmod 755 "$ref_dir"
ref=$(/usr/bin/python3 "$TRAIN" --steps "$STEPS" --ckpt-every 25 --out "$OUT/reference.bin" \
      --ckpt-dir "$ref_dir/ckpt" | sed -n 's/^done //p')
rm -rf "$ref_dir"
echo "  reference parameters sha256 $ref"

say "team-a: an acceptable job (2 GPUs) starts In Quota"
train_env=(--export=ALL,DEMO_STEPS=$STEPS,DEMO_TRAIN=$TRAIN,IDLETIME_CKPT_LIB=$IDLETIME_CKPT_LIB)
acc=$(submit alice acceptable --idle-resources=acceptable --gres=gpu:a100:2 -t 10 \
      "${train_env[@]},DEMO_OUT=$OUT/acceptable.bin" "$here/jobs/train.sh")
wait_for 60 "acceptable job running" state_is "$acc" RUNNING
check "acceptable job runs in its quota partition" [ "$(field "$acc" Partition)" = quota-team-a ]

say "team-a: two only jobs borrow team-b's idle GPUs"
only1=$(submit alice only-2gpu --idle-resources=only --gres=gpu:a100:2 -t 10 \
        "${train_env[@]},DEMO_OUT=$OUT/only-2gpu.bin" "$here/jobs/train.sh")
only2=$(submit alice only-4gpu --idle-resources=only --gres=gpu:a100:4 -t 10 \
        "${train_env[@]},DEMO_OUT=$OUT/only-4gpu.bin" "$here/jobs/train.sh")
flaky=$(submit alice flaky --quota=team-a -t 5 "$here/jobs/flaky.sh")
wait_for 60 "both only jobs running" bash -c "[ \"\$(squeue -h -j $only1,$only2 -t R -o %i | wc -l)\" = 2 ]"
check "only jobs run on idle capacity" [ "$(field "$only1" Partition)" = idle-a100 ] 
check "team-a uses 8 GPUs, twice its quota of 4" [ "$(squeue -h -u alice -t R -o %b | grep -o 'a100:[0-9]*' | cut -d: -f2 | paste -sd+ | bc)" = 8 ]
# Both trainers must have written a checkpoint before the owner comes (starting PyTorch takes
# from 2 s on an idle machine to over 20 s on a loaded one).
wait_for 240 "both only jobs wrote a checkpoint" bash -c "grep -qs '^saved ' '$OUT/only-2gpu-$only1.out' && grep -qs '^saved ' '$OUT/only-4gpu-$only2.out'"
views "team-a borrows team-b's idle quota"

say "team-b: bob submits guaranteed work needing its 4 GPUs (plain sbatch: his quota, as README says)"
t_submit=$(date +%s.%N)
owner=$(submit bob owner --gres=gpu:a100:4 -t 5 --export=ALL,DEMO_HOLD=30 "$here/jobs/owner.sh")
check "bob's plain sbatch was routed to his quota partition" [ "$(field "$owner" Partition)" = quota-team-b ]
wait_for 120 "owner job running" state_is "$owner" RUNNING
wait_for 10 "owner job output" grep -qs '^start ' "$OUT/owner-$owner.out"
t_start=$(sed -n 's/^start \([0-9.]*\).*/\1/p' "$OUT/owner-$owner.out")
owner_wait=$(echo "$t_start - $t_submit" | bc)
echo "  owner waited ${owner_wait} s for its GPUs (Slurm alone with GraceTime=30: 80-88 s)"
# DEMO_OWNER_WAIT_MAX: 10 s on an idle machine; t-demo (CI, many clusters on 2 cores) asks only
# that the release beat the GraceTime kill (30 s), which is what plain Slurm would wait.
max_wait=${DEMO_OWNER_WAIT_MAX:-10}
check "owner job starts within $max_wait s" [ "$(echo "$owner_wait < $max_wait" | bc)" = 1 ]
check "acceptable (In Quota) job was never touched" [ "$(field "$acc" Restarts)" = 0 ]
victim=$only2
[ "$(field "$only1" Restarts)" = 0 ] || victim=$only1
check "an only job was preempted and requeued" [ "$(field "$victim" Restarts)" -ge 1 ]
views "team-b reclaimed its quota"

say "waiting for every job to finish (the preempted job resumes from its checkpoint)"
for j in $acc $only1 $only2 $flaky $owner; do wait_for 600 "job $j completed" gone_or_done "$j" || true; done
views "all done"

say "summary"
log=$(cat "$OUT"/only-*-"$victim".out)
notice=$(sed -n 's/^notice //p' <<<"$log" | head -1)
resumed=$(sed -n 's/^resumed //p' <<<"$log" | head -1)
gpus=$([ "$victim" = "$only2" ] && echo 4 || echo 2)
lost_steps=$(( ${notice:-0} - ${resumed:-0} ))
echo "  owner wait for reclaimed GPUs: ${owner_wait} s"
echo "  preempted job $victim: notice at step ${notice:-?}, resumed at step ${resumed:-?}: ${lost_steps} steps lost"
echo "  GPU-seconds of work lost: $(echo "$lost_steps * 0.1 * $gpus" | bc) (steps x 0.1 s/step x $gpus GPUs)"
check "preempted job resumed from its checkpoint" [ -n "$resumed" ] && [ "${resumed:-0}" -gt 0 ]
check "at most one step of work lost" [ "$lost_steps" -le 1 ]
for f in acceptable only-2gpu only-4gpu; do
    got=$(sed -n 's/^done //p' "$OUT/$f"-*.out | tail -1)
    check "$f: final model bitwise equal to the uninterrupted run" [ "$got" = "$ref" ]
done
check "flaky job restarted after its retryable failure and completed" \
    grep -q '^finished on restart [1-9]' "$OUT"/flaky-"$flaky".out
if [ ${#failures[@]} -gt 0 ]; then
    printf '\ndemo FAILED: %s\n' "${failures[@]}"; exit 1
fi
printf '\ndemo passed: every behaviour above was observed on the real cluster\n'
