#!/bin/bash
# Every rejection of an idletime submission, with real sbatch: sbatch exits non-zero, prints one
# line naming what is wrong and what is allowed, and no job exists afterwards (squeue and sacct).
# Needs the idletime plugins installed (start.sh loads them when present).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
it_begin
grep -q '^JobSubmitPlugins=idletime' "$IC_CONF" || it_fail "cluster runs without job_submit/idletime (install the plugins, rerun start.sh)"
SLEEP=$IT_JOBS_DIR/sleep.sh
T0=$(date +%Y-%m-%dT%H:%M:%S)

# expect_reject NAME USER NEEDLE [ENV=VALUE...] -- SBATCH-ARGS...
expect_reject() {
	local name=$1 user=$2 needle=$3 out rc envs=()
	shift 3
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	out=$(cd /tmp && runuser -u "$user" -- env SLURM_CONF="$SLURM_CONF" "${envs[@]}" \
		sbatch --parsable -J "rej-$name" --output=/dev/null "$@" "$SLEEP" 5 2>&1) && rc=0 || rc=$?
	[ "$rc" -ne 0 ] || it_fail "$name: sbatch accepted the job ($out)"
	grep -qF -- "$needle" <<<"$out" || it_fail "$name: sbatch said '$out', expected '$needle'"
	[ -z "$(squeue -h --name="rej-$name" -o %i)" ] || it_fail "$name: a job exists in squeue"
	it_info "$name: rc=$rc: $(grep -F -- "$needle" <<<"$out" | head -n1)"
}

expect_reject bad-mode alice "--idle-resources=bogus is invalid (allowed: none, acceptable, only)" -- \
	--idle-resources=bogus
expect_reject bad-env-mode alice "IDLETIME_IDLE_RESOURCES=sometimes is invalid (allowed: none, acceptable, only)" \
	IDLETIME_IDLE_RESOURCES=sometimes -- --gres=gpu:a100:1
expect_reject bad-count alice "--max-restarts=-1 is invalid (allowed: a non-negative integer" -- \
	--idle-resources=only --max-restarts=-1
expect_reject bad-policy alice "--ft-policy=retry is invalid (allowed: none, exit-code, exit-code-and-error-msg)" -- \
	--ft-policy=retry
expect_reject unknown-quota alice 'unknown quota "nosuch" (quotas: team-a, team-b' -- \
	--idle-resources=only --quota=nosuch
expect_reject quota-not-allowed alice 'account "team-a" may not use quota "team-b" (allowed accounts: team-b)' -- \
	--idle-resources=only --quota=team-b
expect_reject spec-not-offered alice 'GPU spec "v100" is not offered in tenant "acme" (offered: a100, h100)' -- \
	--idle-resources=only --quota=team-a --gres=gpu:v100:1
expect_reject spec-other-pool alice 'quota "team-a" is in a pool of GPU spec "a100"; spec "h100" needs a quota of a "h100" pool' -- \
	--idle-resources=acceptable --quota=team-a --gres=gpu:h100:1
expect_reject spec-other-tenant dave 'GPU spec "a100" is not offered in tenant "beta" (offered: h100)' -- \
	--idle-resources=only --gres=gpu:a100:1
expect_reject general-pool-other erin 'quota "team-cpu" is in general pool "cpu-gen", which can use only its own pool' -- \
	--idle-resources=only --gres=gpu:a100:1
expect_reject partition-disagrees alice 'partition "idle-h100-beta" does not fit --idle-resources=only of quota "team-a"' -- \
	--idle-resources=only --quota=team-a -p idle-h100-beta
expect_reject general-pool-partition erin 'partition "idle-a100-east" does not fit --idle-resources=only of quota "team-cpu"' -- \
	--idle-resources=only -p idle-a100-east
expect_reject ambiguous-account alice 'account "team-a" maps to several quotas (team-a, team-h)' -- \
	--idle-resources=only
# Claiming another team's account picks that team's partitions, but Slurm still checks the
# user's association: no access is gained.
expect_reject foreign-account alice "Invalid account or account/partition combination" SBATCH_ACCOUNT=team-b -- \
	--idle-resources=only
# An explicit -A (invisible to SPANK) is what the policy checks, not the default account.
expect_reject explicit-account alice 'account "team-c" may not use quota "team-a"' -- \
	-A team-c --idle-resources=only --quota=team-a

sleep 2 # slurmdbd records jobs asynchronously
left=$(sacct -n -X -P -S "$T0" -o JobName,JobID 2>/dev/null | grep '^rej-' || true)
[ -z "$left" ] || it_fail "rejected submissions left accounting records: $left"
it_pass
