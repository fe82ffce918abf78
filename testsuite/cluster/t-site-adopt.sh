#!/bin/bash
# cluster-args: --config etc/idletime.json --no-idletime --extra-conf testsuite/cluster/site-adopt.conf
# timeout: 600
# doc/admin-guide.md walked step by step on a site that existed before idletime: plain Slurm with
# its own partitions (batch Default=YES over every node, gpu, debug; site-adopt.conf), accounts
# (physics without a quota, team-b that becomes a quota account) and running and pending jobs.
# Then, as the guide says: validate, render, acct.sh objects, Include the partitions, PluginDir,
# JobSubmitPlugins, plugstack line, EpilogSlurmctld wrapper, PreemptMode=OFF on the site's own
# partitions, slurmctld restart, acct.sh limits, `idletime check`. Asserts:
#   - before the PreemptMode step `idletime check` reports the site partitions as preemptible;
#     after it `idletime check` exits 0;
#   - the jobs running before adoption keep running (no requeue) and are not preempted by a quota
#     job asking for their GPUs; the held job starts in its partition after adoption;
#   - plain `sbatch train.sh` of an account without quota still goes to the site default (batch),
#     `sbatch -p debug|gpu` stays where it says, plain `sbatch train.sh` of a quota account goes to
#     its quota partition (README), and README's --idle-resources=only line runs on idle capacity.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
it_begin
REPO=$(cd "$IC_SRC/../.." && pwd)
PREFIX=${PREFIX:-/usr/local}
[ -f "$PREFIX/lib/idletime/slurm/job_submit_idletime.so" ] || it_fail "no plugins under $PREFIX/lib/idletime/slurm"
if grep -q '^JobSubmitPlugins=' "$IC_CONF" || scontrol show partition quota-team-b >/dev/null 2>&1; then
	it_fail "not a site before idletime: start it with this test's cluster-args (run-tests.sh/run-suites.sh do)"
fi
it_assert_eq "batch" "$(scontrol show partition -o | grep 'Default=YES' | sed 's/PartitionName=\([^ ]*\).*/\1/')" "site default partition"

# as USER CMD...: CMD as USER in USER's work dir, login-like environment; stdout+stderr.
WORK=$IC_DIR/out/site-adopt-$$
as() {
	local user=$1
	shift
	(cd "$WORK/$user" && runuser -u "$user" -- env -i HOME="$WORK/$user" USER="$user" LOGNAME="$user" SHELL=/bin/bash \
		PATH="$IC_SLURM_PATH$PREFIX/bin:/usr/bin:/bin" LANG=C.UTF-8 SLURM_CONF="$SLURM_CONF" "$@" 2>&1)
}
# sub USER ARGS...: sbatch as USER; prints the job id.
sub() {
	local user=$1 out id
	shift
	out=$(as "$user" sbatch "$@") || it_fail "sbatch $* as $user: $out"
	id=$(sed -n 's/^Submitted batch job \([0-9][0-9]*\)$/\1/p' <<<"$out")
	[ -n "$id" ] || it_fail "sbatch $* as $user: no job id in: $out"
	echo "$id"
}
for u in alice bob carol; do
	install -d -o "$u" -m 755 "$WORK/$u"
	printf '#!/bin/bash\necho "train.sh in $SLURM_JOB_PARTITION"\nsleep "${1:-3}"\necho done\n' >"$WORK/$u/train.sh"
	chown "$u" "$WORK/$u/train.sh"
done
part() { it_job_field "$1" Partition; }

# ---- the site before idletime: accounts, users, jobs ---------------------------------------
sacctmgr -i add account physics,team-b Description=site >/dev/null 2>&1 || true
sacctmgr -i add user carol account=physics defaultaccount=physics >/dev/null 2>&1 || true
sacctmgr -i add user bob account=team-b defaultaccount=team-b >/dev/null 2>&1 || true
defacct_is() { [[ $(scontrol show assoc_mgr users="$1" flags=users 2>/dev/null) == *DefAccount=$2* ]]; }
{ ic_poll 20 defacct_is carol physics && ic_poll 20 defacct_is bob team-b; } || it_fail "site users not in slurmctld's cache"
old_run=$(sub carol train.sh 600)
old_gpu=$(sub bob -p gpu -w a100-1 --gres=gpu:a100:4 train.sh 600)
old_held=$(sub carol --hold train.sh)
it_wait_state "$old_run" RUNNING 30 || it_fail "site job $old_run did not start"
it_wait_state "$old_gpu" RUNNING 30 || it_fail "site GPU job $old_gpu did not start"
it_assert_eq batch "$(part "$old_run")" "partition of the site's plain job"

# ---- the guide --------------------------------------------------------------------------------
G=$IC_ETC/idletime # stands for /etc/idletime
install -d "$G"
install -m 644 "$REPO/etc/idletime.json" "$G/idletime.json"                        # step 2
it_assert_eq "$G/idletime.json: ok (2 tenants, 5 pools, 6 quotas)" "$(idletime validate "$G/idletime.json" 2>&1)" "idletime validate"
idletime render --section=partitions "$G/idletime.json" >"$G/partitions.conf" || it_fail "render partitions" # step 3
idletime render --section=sacctmgr "$G/idletime.json" >"$G/acct.sh" || it_fail "render sacctmgr"
while read -r line; do # the site's NodeName lines already match the nodes section
	grep -q "^$line " "$IC_CONF" || it_fail "nodes section line not in slurm.conf: $line"
done < <(idletime render --section=nodes "$G/idletime.json" | grep '^NodeName=')
sh "$G/acct.sh" objects || it_fail "acct.sh objects"                                # step 4
sacctmgr -i add user alice account=team-a defaultaccount=team-a >/dev/null 2>&1 || true
[ -n "$(sacctmgr -n -P show assoc user=alice account=team-a format=user)" ] || it_fail "alice not in team-a"
HINT= # step 5 (account_hint=no: the build reads DefaultAccount in slurmctld)
! grep -qa assoc_mgr_fill_in_user "$PREFIX/lib/idletime/slurm/job_submit_idletime.so" || HINT=" account_hint=no"
printf 'required %s config=%s munge_socket=%s%s\n' "$PREFIX/lib/idletime/slurm/spank_idletime.so" \
	"$G/idletime.json" "$IC_SOCK" "$HINT" >"$G/plugstack.conf"
# The guide's two-line wrapper; --log/--last-good keep this cluster's files under its own dir.
printf '#!/bin/sh\nexport SLURM_CONF=%s\nexec %s --config %s --log %s --last-good %s\n' "$IC_CONF" \
	"$PREFIX/sbin/idletime-ft-hook" "$G/idletime.json" "$IC_LOGD/ft-hook.log" "$G/ft-hook-last-good.json" >"$G/ft-hook-wrapper"
chmod 755 "$G/ft-hook-wrapper"
cp "$IC_CONF" "$G/slurm.conf.before"
{
	echo "# ---- idletime (doc/admin-guide.md step 5)"
	echo "Include $G/partitions.conf"
	echo "PluginDir=$PREFIX/lib/idletime/slurm:/usr/lib/x86_64-linux-gnu/slurm-wlm"
	echo "JobSubmitPlugins=idletime"
	echo "PlugStackConfig=$G/plugstack.conf"
	echo "EpilogSlurmctld=$G/ft-hook-wrapper"
} >>"$IC_CONF"
restart_ctld() { # slurmctld with $IDLETIME_CONFIG, as the guide says; jobs keep running
	ic_stop_daemon slurmctld 30
	setsid env IDLETIME_CONFIG="$G/idletime.json" "$IC_BIN/slurmctld" -D -f "$IC_CONF" </dev/null >>"$IC_LOGD/slurmctld.out" 2>&1 &
	echo $! >"$IC_RUN/slurmctld.pid"
	ic_poll 30 ic_ctld_up || { ic_log_tail slurmctld; it_fail "slurmctld did not come back"; }
}
restart_ctld
scontrol reconfigure || it_fail "scontrol reconfigure"
ic_poll 20 sh -c 'sacctmgr -n -P show tres format=type,name | grep -qx "gres|gpu"' || it_fail "no gres/gpu TRES"
sh "$G/acct.sh" limits || it_fail "acct.sh limits"                                  # step 6
# The site's partitions now inherit PreemptMode=REQUEUE below the quota tier: check says so.
out=$(idletime check --config="$G/idletime.json" 2>&1) && it_fail "idletime check passed with preemptible site partitions: $out"
for p in batch gpu debug; do
	grep -q "known-bad: partition $p PreemptMode" <<<"$out" || it_fail "check did not flag partition $p: $out"
done
sed -i -E 's/^(PartitionName=(batch|gpu|debug) .*)$/\1 PreemptMode=OFF/' "$IC_CONF"
scontrol reconfigure || it_fail "scontrol reconfigure"
out=$(idletime check --config="$G/idletime.json" 2>&1) || it_fail "idletime check after the guide: $out" # step 7
it_info "idletime check: $(tail -n1 <<<"$out")"

# ---- the site's jobs and partitions after adoption -------------------------------------------
for id in "$old_run" "$old_gpu"; do
	it_assert_eq RUNNING "$(it_job_field "$id" JobState)" "state of pre-adoption job $id"
	it_assert_eq 0 "$(it_job_field "$id" Restarts)" "restarts of pre-adoption job $id"
done
# A quota job asking for the GPUs of the site job waits; it does not preempt it.
q=$(sub alice --quota=team-a -w a100-1 --gres=gpu:a100:4 train.sh 1)
it_wait_reason "$q" 'Resources|Priority|ReqNodeNotAvail.*' 30 || it_fail "quota job $q: $(it_job_field "$q" Reason)"
sleep 5
it_assert_eq RUNNING "$(it_job_field "$old_gpu" JobState)" "site GPU job $old_gpu next to quota job $q"
it_assert_eq 0 "$(it_job_field "$old_gpu" Restarts)" "restarts of site GPU job $old_gpu"
scancel "$q" "$old_gpu"
scontrol release "$old_held" || it_fail "release $old_held"
plain_site=$(sub carol train.sh)
debug=$(sub carol -p debug train.sh)
gpu=$(sub bob -p gpu train.sh)
plain_quota=$(sub bob train.sh)
only=$(sub bob --idle-resources=only --gres=gpu:a100:2 train.sh)
it_assert_eq batch "$(part "$plain_site")" "plain sbatch of physics (no quota)"
it_assert_eq debug "$(part "$debug")" "sbatch -p debug"
it_assert_eq gpu "$(part "$gpu")" "sbatch -p gpu"
it_assert_eq quota-team-b "$(part "$plain_quota")" "plain sbatch of team-b (quota)"
for id in "$old_held" "$plain_site" "$debug" "$gpu" "$plain_quota" "$only"; do
	it_wait_state "$id" COMPLETED 90 || it_fail "job $id ($(part "$id")) did not complete: $(it_job_field "$id" JobState) $(it_job_field "$id" Reason)"
done
# slurmdbd records a job's end shortly after slurmctld: poll accounting for its partition.
acct_part() { [ -n "$(sacct -n -X -P -j "$1" -o Partition | head -n1)" ]; }
ic_poll 30 acct_part "$only" || it_fail "no accounting record of job $only"
ic_poll 30 acct_part "$old_held" || it_fail "no accounting record of job $old_held"
[[ $(sacct -n -X -P -j "$only" -o Partition | head -n1) == idle-a100-* ]] || it_fail "only job $only ran in $(sacct -n -X -P -j "$only" -o Partition)"
it_assert_eq batch "$(sacct -n -X -P -j "$old_held" -o Partition | head -n1)" "partition of the held site job"
it_info "site jobs $old_run $old_gpu kept running; batch/debug/gpu/quota-team-b/idle jobs completed"
# A site job that fails with exit 137 (which idletime's fault-tolerance policy retries) stays
# FAILED: the EpilogSlurmctld hook leaves the site's own partitions to Slurm.
crash=$(sub carol -p debug --wrap 'exit 137')
it_wait_state "$crash" FAILED 60 || it_fail "site job $crash: $(it_job_field "$crash" JobState)"
sleep 8
it_assert_eq FAILED "$(it_job_field "$crash" JobState)" "site job $crash 8 s after it failed"
it_assert_eq 0 "$(it_job_field "$crash" Restarts)" "restarts of site job $crash"
scancel "$old_run"
it_pass
