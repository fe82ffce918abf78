#!/bin/bash
# idletime-exporter under PrivateData=jobs (security review R15). Run as an ordinary user it sees
# only that user's jobs: it must say so when it starts (one warning line naming SlurmUser and the
# fix), and its numbers show the undercount. As root it sees every job and warns nothing; without
# PrivateData nobody is warned (t-exporter runs on a cluster without it and checks stderr too).
# cluster-args: --config etc/idletime.json --extra-conf testsuite/cluster/private-data.conf
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
it_begin
IT=${IDLETIME_BIN:-${PREFIX:-/usr/local}/bin/idletime}
EXP=${IDLETIME_EXPORTER:-$(dirname "$(dirname "$IT")")/sbin/idletime-exporter}
CFG=${IDLETIME_TEST_CONFIG:-$(cd "$IC_SRC/../.." && pwd)/etc/idletime.json}
[ -x "$EXP" ] || it_fail "no idletime-exporter at $EXP"
scontrol show config | grep -q '^PrivateData *= *jobs' ||
	it_fail "needs PrivateData=jobs: start the cluster with this test's cluster-args (run-suites.sh does)"

a=$(it_submit alice -J exp-inq -p quota-team-a --gres=gpu:1 -n1 "$IT_JOBS_DIR/sleep.sh" 300) || it_fail "sbatch alice"
c=$(it_submit carol -J exp-nq --idle-resources=only --gres=gpu:1 -n1 "$IT_JOBS_DIR/sleep.sh" 300) || it_fail "sbatch carol"
it_wait_state "$a" RUNNING 60 || it_fail "alice's job $a never ran"
it_wait_state "$c" RUNNING 60 || it_fail "carol's job $c never ran"

# metric NAME [QUOTA] < scrape: the value of the series (of that quota).
metric() {
	local re="^$1 "
	[ -z "${2:-}" ] || re="^$1\\{[^}]*quota=\"$2\"\\} "
	grep -E "$re" | awk '{ print $2 }'
}
err=$IC_DIR/exporter-private.err
out=$("$EXP" --config="$CFG" --once 2>"$err") || it_fail "exporter --once as root failed: $(cat "$err")"
[ ! -s "$err" ] || it_fail "root was warned: $(cat "$err")"
root_jobs=$(metric idletime_slurm_jobs <<<"$out")  # also ended jobs slurmctld still holds (MinJobAge)
it_assert_eq 1 "$(metric idletime_quota_guaranteed_running_jobs team-a <<<"$out")" "team-a running jobs seen by root"

out=$(cd / && runuser -u carol -- "$EXP" --config="$CFG" --once 2>"$err") || it_fail "exporter --once as carol failed: $(cat "$err")"
it_assert_eq 1 "$(wc -l <"$err")" "stderr lines of the exporter as carol"
want="idletime/exporter: warning: runs as carol (ordinary user) and slurmctld has PrivateData=jobs: it sees only that user's jobs"
grep -qF "$want" "$err" || it_fail "no warning for carol: $(cat "$err")"
grep -qF "run it as SlurmUser ($(scontrol show config | awk '$1 == "SlurmUser" { sub(/\(.*/, "", $3); print $3 }')) or root" "$err" ||
	it_fail "the warning does not name SlurmUser: $(cat "$err")"
carol_jobs=$(metric idletime_slurm_jobs <<<"$out")
[ -n "$carol_jobs" ] && [ "$carol_jobs" -ge 1 ] && [ "$carol_jobs" -lt "$root_jobs" ] ||
	it_fail "carol sees $carol_jobs jobs, root $root_jobs: PrivateData=jobs should hide alice's from carol"
it_assert_eq 0 "$(metric idletime_quota_guaranteed_running_jobs team-a <<<"$out")" "team-a running jobs seen by carol"
it_info "root sees $root_jobs jobs, carol $carol_jobs and is warned: $(cat "$err")"
it_pass
