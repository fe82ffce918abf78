#!/bin/bash
# The job environment spank/idletime exports, seen by real batch jobs:
#  (a) an `only` job: IDLETIME_MODE/PREEMPTIBLE=1/PARTITION_KIND=idle/CKPT_SIGNAL/GRACE_TIME/
#      RESTART_COUNT=0 and IDLETIME_CKPT_DIR=<root>/alice/<jobid>-<key>, a directory owned by alice,
#      0700 (<key>: 16 hex digits job_submit/idletime stamps at submission);
#      after a requeue the same job sees RESTART_COUNT=1 and the same directory;
#  (b) a `none` job with --quota: PREEMPTIBLE=0, PARTITION_KIND=quota, IDLETIME_QUOTA=team-a;
#  (c) a job without idletime options: no IDLETIME_* variable at all;
#  (d) directories planted by another user under the job's id (the old <root>/<user>/<jobid> names)
#      are never handed out: the job gets its own <jobid>-<key> directory, alice's;
#  (e) no --quota, account team-a (quotas team-a and team-h): the quota job_submit resolved from
#      the GPU spec reaches the job (a100 -> team-a, h100 -> team-h).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
it_begin
grep -q '^PlugStackConfig=' "$IC_CONF" || it_fail "cluster runs without spank/idletime"
ROOT=$(jq -r .idle.checkpoint_root "$(sed -n 's/.*spank_idletime.so.*config=\([^ ]*\).*/\1/p' "$IC_ETC/plugstack.conf")")
OUT=$IC_DIR/out
mkdir -p "$OUT" && chmod 1777 "$OUT"
# Prints IDLETIME_* (sorted) and the checkpoint dir's owner and mode, then sleeps.
JOB='env | grep "^IDLETIME_" | sort; [ -n "$IDLETIME_CKPT_DIR" ] && stat -c "DIR %U %a" "$IDLETIME_CKPT_DIR"; sleep ${HOLD:-0}'

var() { sed -n "s/^$2=//p" "$1" | tail -n1; }
wait_out() { ic_poll 20 grep -qs "^IDLETIME_RESTART_COUNT=$2" "$1" || it_fail "no IDLETIME_RESTART_COUNT=$2 in $1: $(cat "$1" 2>&1)"; }

# ---- (a)
id=$(it_submit alice --idle-resources=only --gres=gpu:a100:1 -o "$OUT/env-a-%j.out" --open-mode=append \
	--export=ALL,HOLD=5 --wrap="$JOB") || it_fail "sbatch (a)"
f=$OUT/env-a-$id.out
it_wait_state "$id" RUNNING 30 || it_fail "job $id did not start"
wait_out "$f" 0
it_assert_eq only "$(var "$f" IDLETIME_MODE)" "IDLETIME_MODE"
it_assert_eq 1 "$(var "$f" IDLETIME_PREEMPTIBLE)" "IDLETIME_PREEMPTIBLE in $(it_job_field "$id" Partition)"
it_assert_eq idle "$(var "$f" IDLETIME_PARTITION_KIND)" "IDLETIME_PARTITION_KIND"
it_assert_eq USR1 "$(var "$f" IDLETIME_CKPT_SIGNAL)" "IDLETIME_CKPT_SIGNAL"
it_assert_eq 30 "$(var "$f" IDLETIME_GRACE_TIME)" "IDLETIME_GRACE_TIME"
dir=$(var "$f" IDLETIME_CKPT_DIR)
[[ $dir =~ ^$ROOT/alice/$id-[0-9a-f]{16}$ ]] || it_fail "IDLETIME_CKPT_DIR=$dir, want $ROOT/alice/$id-<16 hex digits>"
grep -qx "DIR alice 700" "$f" || it_fail "checkpoint dir not alice's with mode 700: $(grep ^DIR "$f")"
scontrol requeue "$id" || it_fail "scontrol requeue $id"
# A requeued job waits for BeginTime (+121 s); once it is PENDING, root moves that to now.
it_wait_state "$id" PENDING 60 || it_fail "requeued job $id is not PENDING"
it_release_requeue_delay "$id" || it_fail "cannot reset StartTime of $id"
wait_out "$f" 1
[ "$(grep -c '^IDLETIME_CKPT_DIR=' "$f")" = 2 ] || it_fail "expected two runs in $f"
it_assert_eq "$dir" "$(var "$f" IDLETIME_CKPT_DIR)" "IDLETIME_CKPT_DIR after requeue"
it_info "(a) job $id: $(grep ^IDLETIME_ "$f" | sort -u | tr '\n' ' ')"
it_cleanup_jobs || it_fail "jobs of (a) did not end"

# ---- (b)
id=$(it_submit alice --quota=team-a --gres=gpu:a100:1 -o "$OUT/env-b-%j.out" --wrap="$JOB") || it_fail "sbatch (b)"
f=$OUT/env-b-$id.out
wait_out "$f" 0
it_assert_eq none "$(var "$f" IDLETIME_MODE)" "IDLETIME_MODE (b)"
it_assert_eq team-a "$(var "$f" IDLETIME_QUOTA)" "IDLETIME_QUOTA (b)"
it_assert_eq 0 "$(var "$f" IDLETIME_PREEMPTIBLE)" "IDLETIME_PREEMPTIBLE (b)"
it_assert_eq quota "$(var "$f" IDLETIME_PARTITION_KIND)" "IDLETIME_PARTITION_KIND (b)"
it_info "(b) job $id in $(it_job_field "$id" Partition): PREEMPTIBLE=0 KIND=quota QUOTA=team-a"

# ---- (c)
id=$(it_submit alice -p quota-team-a --gres=gpu:1 -o "$OUT/env-c-%j.out" --wrap='env | grep -c "^IDLETIME_"; true') ||
	it_fail "sbatch (c)"
f=$OUT/env-c-$id.out
ic_poll 30 test -s "$f" || it_fail "job $id wrote nothing"
it_assert_eq 0 "$(head -n1 "$f")" "number of IDLETIME_* variables in a plain job"
it_info "(c) plain job $id has no IDLETIME_* variable"

# ---- (d) bob plants alice/<next ids>; alice's next job must not get it
next=$((id + 1))
mkdir -p "$ROOT/alice"
for i in 0 1 2 3 4; do install -d -o bob -g bob -m 0777 "$ROOT/alice/$((next + i))"; done
id=$(it_submit alice --idle-resources=only --gres=gpu:a100:1 -o "$OUT/env-d-%j.out" --wrap="$JOB") || it_fail "sbatch (d)"
f=$OUT/env-d-$id.out
wait_out "$f" 0
[ "$id" -lt $((next + 5)) ] || it_fail "job id $id outside the planted range $next..$((next + 4))"
dir=$(var "$f" IDLETIME_CKPT_DIR)
[[ $dir =~ ^$ROOT/alice/$id-[0-9a-f]{16}$ ]] || it_fail "(d) IDLETIME_CKPT_DIR=$dir"
grep -qx "DIR alice 700" "$f" || it_fail "(d) checkpoint dir not alice's with mode 700: $(grep ^DIR "$f")"
it_assert_eq "bob 777" "$(stat -c '%U %a' "$ROOT/alice/$id")" "(d) planted directory $ROOT/alice/$id"
for i in 0 1 2 3 4; do rm -rf "${ROOT:?}/alice/$((next + i))"; done
it_info "(d) job $id: directories planted by bob left alone, the job got its own $dir"
it_cleanup_jobs || it_fail "jobs of (d) did not end"

# ---- (e)
for spec in a100:team-a h100:team-h; do
	id=$(it_submit alice --idle-resources=only --gres=gpu:${spec%%:*}:1 -o "$OUT/env-e-%j.out" --wrap="$JOB") ||
		it_fail "sbatch (e) ${spec%%:*}"
	f=$OUT/env-e-$id.out
	wait_out "$f" 0
	it_assert_eq "${spec#*:}" "$(var "$f" IDLETIME_QUOTA)" "IDLETIME_QUOTA of a ${spec%%:*} job without --quota"
	it_assert_eq only "$(var "$f" IDLETIME_MODE)" "IDLETIME_MODE (e)"
	it_info "(e) job $id (${spec%%:*}, no --quota) in $(it_job_field "$id" Partition): IDLETIME_QUOTA=${spec#*:}"
done
it_pass
