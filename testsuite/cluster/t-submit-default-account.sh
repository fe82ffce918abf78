#!/bin/bash
# A routed job without -A takes its quota from the user's DefaultAccount, read by job_submit/idletime
# in slurmctld's association cache: sbatch sends no account hint (plugstack account_hint=no, set by
# start.sh for a --with-slurm-src build), a DefaultAccount change in slurmdbd routes the next job at
# once, and an explicit -A still wins. frank has accounts team-a (default) and team-b; the a100 GPU
# picks quota team-a among the two of account team-a (team-a, team-h).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
it_begin
grep -q '^JobSubmitPlugins=idletime' "$IC_CONF" || it_fail "cluster runs without job_submit/idletime"
grep -q 'spank_idletime.so .*account_hint=no' "$IC_ETC/plugstack.conf" ||
	it_fail "plugstack without account_hint=no (a build without --with-slurm-src?): $(cat "$IC_ETC/plugstack.conf")"
ic_poll 10 grep -q "idletime/job_submit: account of jobs without -A: DefaultAccount from slurmctld's association cache" \
	"$IC_LOGD/slurmctld.log" || it_fail "slurmctld did not log the DefaultAccount source of job_submit/idletime"
SLEEP=$IT_JOBS_DIR/sleep.sh
restore() { sacctmgr -i modify user frank set DefaultAccount=team-a >/dev/null 2>&1 || true; }
trap 'restore; it_cleanup_jobs' EXIT

# submit_check NAME WANT_ACCOUNT [SBATCH-ARGS...]: routed job held; prints its id.
submit_check() {
	local name=$1 want=$2 home out id
	shift 2
	home=$(getent passwd frank | cut -d: -f6)
	out=$(cd "${home:-/tmp}" && runuser -u frank -- env -i HOME="${home:-/tmp}" PATH=$IC_SLURM_PATH/usr/local/bin:/usr/bin:/bin \
		SLURM_CONF="$SLURM_CONF" sbatch -vv --parsable --hold -J "defacct-$name" --output=/dev/null \
		--idle-resources=none --gres=gpu:a100:1 "$@" "$SLEEP" 5 2>&1) || it_fail "$name: sbatch failed: $out"
	id=$(tail -n1 <<<"$out")
	[[ $id =~ ^[0-9]+$ ]] || it_fail "$name: no job id in: $(tail -n3 <<<"$out")"
	! grep -q "idletime/spank: DefaultAccount of" <<<"$out" || it_fail "$name: sbatch still asked slurmctld for the account"
	it_assert_eq "$want" "$(it_job_field "$id" Account)" "account of $name job $id"
	it_assert_eq "quota-$want" "$(it_job_field "$id" Partition)" "partition of $name job $id"
	scancel "$id"
	it_info "$name: job $id account $want partition quota-$want"
}

submit_check default team-a
sacctmgr -i modify user frank set DefaultAccount=team-b >/dev/null || it_fail "sacctmgr modify user frank"
ic_poll 20 eval '[[ $(scontrol show assoc_mgr users=frank flags=users 2>/dev/null) == *DefAccount=team-b* ]]' ||
	it_fail "slurmctld's cache did not get frank's new DefaultAccount"
submit_check changed team-b
submit_check explicit team-a -A team-a
it_pass
