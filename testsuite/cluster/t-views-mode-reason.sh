#!/bin/bash
# idletime jobs shows what the user asked for and why each run ended (issue 12.3):
#  A  alice, --idle-resources=acceptable, started in quota-team-a: MODE acceptable (the mode
#     job_submit recorded, not the narrowed partition) and RESOURCES In Quota, text and JSON
#  V  alice's idle-time job reclaimed by bob's guaranteed job O (quota team-b): --events says
#     "reclaimed by quota team-b (job O)", JSON reason reclaimed, reclaimed_by_quota team-b,
#     preempted_by_job O
#  T  erin's job with -t 1 in quota-team-cpu: --events says time limit (reason time-limit)
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=ft-lib.sh
. "$IC_SRC/ft-lib.sh"
# shellcheck source=../../bench/reclaim/lib.sh
. "$IC_SRC/../../bench/reclaim/lib.sh"
it_begin
ft_require_hook
rc_env || it_fail "idletime is not installed in $RC_PREFIX"
IT=${IDLETIME_BIN:-$RC_PREFIX/bin/idletime}
CFG=${IDLETIME_TEST_CONFIG:-$(cd "$IC_SRC/../.." && pwd)/etc/idletime.json}
[ -x "$IT" ] || it_fail "no idletime tool at $IT"
grep -q '^JobSubmitPlugins=idletime' "$IC_CONF" || it_fail "cluster runs without job_submit/idletime"
trap 'it_cleanup_jobs' EXIT
jobs_as() { local u=$1; shift; runuser -u "$u" -- env SLURM_CONF="$SLURM_CONF" "$IT" jobs --config="$CFG" "$@"; }
row() { jobs_as "$1" --json | jq -r --argjson id "$2" ".jobs[] | select(.job_id == \$id) | $3"; }

T=$(it_submit erin -J vm-time -p quota-team-cpu -n1 -t 1 "$IT_JOBS_DIR/ft-job.sh" sleep 600) || it_fail "sbatch T"
A=$(it_submit alice -J vm-acc --idle-resources=acceptable -w a100-2 --gres=gpu:a100:1 "$RC_JOBS/owner.sh" 600) || it_fail "sbatch A"
it_wait_state "$A" RUNNING 60 || it_fail "A ($A) did not start (Reason=$(it_job_field "$A" Reason))"
it_assert_eq quota-team-a "$(it_job_field "$A" Partition)" "partition A started in"
it_assert_eq "acceptable|in-quota|In Quota" "$(row alice "$A" '[.mode,.resources,.resources_text]|join("|")')" "A: mode|resources (JSON)"
line=$(jobs_as alice | awk -v id="$A" '$1 == id')
[[ $line == *" acceptable "* && $line == *"In Quota"* ]] || it_fail "A in the text list: $line"

# V: released on the notice, requeued; the hook names the job that took its GPUs.
rc_preempt_round probe-exec.sh release vm-rec --save-mb 1 || it_fail "reclaim round failed"
V=$RC_VICTIM O=$RC_OWNER
it_wait_state "$V" PENDING 30 || it_fail "victim $V not requeued"
# wait_admin ID TEXT: the live FT record (its reasons hold spaces: not it_job_field) contains TEXT
wait_admin() { local i; for ((i = 0; i < 300; i++)); do [[ $(ft_admin "$1") == *"$2"* ]] && return 0; sleep 0.2; done; return 1; }
wait_admin "$V" "\"o\":$O," || it_fail "FT record of $V does not name its preemptor $O: $(ft_admin "$V")"
e=$(jobs_as alice --events "$V" --json) || it_fail "--events $V"
it_assert_eq "reclaimed|team-b|$O" "$(jq -r '.runs[0]|[.reason,.reclaimed_by_quota,.preempted_by_job]|join("|")' <<<"$e")" "V run 0: reason|quota|preempting job"
it_assert_eq "preempted: reclaimed by quota team-b (job $O)" "$(jq -r '.runs[0].ended' <<<"$e")" "V run 0 ended"
jobs_as alice --events "$V" | grep -qF "reclaimed by quota team-b (job $O)" || it_fail "--events text of $V: $(jobs_as alice --events "$V")"
it_assert_eq "resource-preempted" "$(row alice "$V" .status)" "V status while it waits"
[[ $(row alice "$V" .reason) == "reclaimed by quota team-b (job $O)"* ]] || it_fail "V reason: $(row alice "$V" .reason)"
scancel "$V" "$O"

# T: ended at its time limit.
it_wait_state "$T" TIMEOUT 200 || it_fail "T ($T) is $(it_job_field "$T" JobState)"
ft_wait_final "$T" 60 || it_fail "final FT record of T"
e=$(jobs_as erin --events "$T" --json) || it_fail "--events $T"
it_assert_eq "time-limit|time limit: ended TIMEOUT|null" "$(jq -r '.runs[0]|[.reason,.ended,(.preempted_by_job|tostring)]|join("|")' <<<"$e")" "T run 0: reason|ended|preempting job"
it_info "A $A: acceptable/In Quota; V $V reclaimed by team-b job $O; T $T time limit"
it_pass
