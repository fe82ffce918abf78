#!/bin/bash
# job_submit/idletime reloads its config when `scontrol reconfigure` rereads slurm.conf, not per
# call; a broken config keeps the last good one and the reason is logged. Edits the config the
# cluster uses (plugstack config= path) and restores it on exit.
#   (a) quota team-b's accounts changed to team-b2 in the file: bob's --quota=team-b is still
#       accepted until reconfigure, rejected after it;
#   (b) the file broken (invalid JSON) + reconfigure: logged, the edited config stays in force
#       (bob still rejected, alice still routed);
#   (c) original restored + reconfigure: bob accepted again.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
it_begin
grep -q '^JobSubmitPlugins=idletime' "$IC_CONF" || it_fail "cluster runs without job_submit/idletime"
CONFIG=$(sed -n 's/.*spank_idletime.so.*config=\([^ ]*\).*/\1/p' "$IC_ETC/plugstack.conf")
[ -f "$CONFIG" ] || it_fail "config $CONFIG of plugstack.conf not found"
LOG=$IC_LOGD/slurmctld.log
SAVED=$(mktemp)
cp -p "$CONFIG" "$SAVED"
restore() { cp -p "$SAVED" "$CONFIG" && scontrol reconfigure; rm -f "$SAVED"; it_cleanup_jobs; }
trap restore EXIT

# bob_submits: 0 when bob's --quota=team-b job is accepted (held, then cancelled); output in $OUTPUT.
bob_submits() {
	local id
	OUTPUT=$(cd /tmp && runuser -u bob -- env SLURM_CONF="$SLURM_CONF" sbatch --parsable --hold --quota=team-b \
		-o /dev/null --wrap=true 2>&1) || return 1
	id=${OUTPUT##*$'\n'}
	scancel "${id%%;*}"
}
# slurm_conf.last_update has one-second resolution, so within the second of a reconfigure the
# plugin also reloads a changed file whose mtime is not later (watch_once). Each edit below waits
# for the next second first: it is then seen only after the next reconfigure, as asserted (stop
# 23's CI: (b) and (c) ran within one second, the restored file was loaded before (c)'s
# reconfigure and (c) found no line after it).
RECONF_SEC=$(date +%s)
next_second() { while [ "$(date +%s)" -le "$RECONF_SEC" ]; do sleep 0.05; done; }
reconfigure() {
	local lines
	lines=$(wc -l <"$LOG")
	scontrol reconfigure || it_fail "scontrol reconfigure"
	RECONF_SEC=$(date +%s)
	RECONF_FROM=$((lines + 1))
	# The plugin rereads its config in a watcher thread (never under slurmctld's locks): wait
	# for its log line, which comes within a fraction of a second.
	local i
	for i in $(seq 50); do
		tail -n +"$RECONF_FROM" "$LOG" | grep -qE 'idletime/job_submit: (loaded|cannot load config)' && return
		sleep 0.1
	done
	it_fail "no job_submit/idletime reload logged within 5 s of scontrol reconfigure"
}
# logged_since_reconf TEXT: TEXT in slurmctld's log after the last reconfigure.
logged_since_reconf() { tail -n +"$RECONF_FROM" "$LOG" | grep -qF -- "$1"; }

bob_submits || it_fail "baseline: bob's --quota=team-b rejected: $OUTPUT"
next_second
jq '(.quotas[] | select(.name == "team-b") | .accounts) = ["team-b2"]' "$SAVED" >"$CONFIG" || it_fail "jq edit"
bob_submits || it_fail "(a) config reloaded without reconfigure: $OUTPUT"
reconfigure
if bob_submits; then it_fail "(a) after reconfigure bob's --quota=team-b still accepted"; fi
grep -qF 'account "team-b" may not use quota "team-b" (allowed accounts: team-b2)' <<<"$OUTPUT" ||
	it_fail "(a) unexpected rejection: $OUTPUT"
ic_poll 5 logged_since_reconf "idletime/job_submit: loaded $CONFIG" || it_fail "(a) no reload logged"
it_info "(a) edited config applied only after reconfigure: $OUTPUT"

next_second
echo '{"tenants": [' >"$CONFIG"
reconfigure
if bob_submits; then it_fail "(b) broken config replaced the last good one (bob accepted)"; fi
grep -qF 'allowed accounts: team-b2' <<<"$OUTPUT" || it_fail "(b) unexpected rejection: $OUTPUT"
ic_poll 5 logged_since_reconf "idletime/job_submit: cannot load config: " || it_fail "(b) broken config not logged"
logged_since_reconf "keeping the last good one" || it_fail "(b) log does not say the last good config is kept"
id=$(it_submit alice --hold --idle-resources=only --gres=gpu:a100:1 --wrap=true) || it_fail "(b) alice rejected"
it_assert_eq idle-a100-east,idle-a100-west "$(it_job_field "$id" Partition)" "(b) alice's routing with the kept config"
it_info "(b) $(tail -n +"$RECONF_FROM" "$LOG" | grep -o 'idletime/job_submit: cannot load config: .*' | head -n1)"

next_second
cp "$SAVED" "$CONFIG"  # not -p: an mtime from before the last reconfigure would be reloaded at once
reconfigure
bob_submits || it_fail "(c) restored config not applied: $OUTPUT"
ic_poll 5 logged_since_reconf "idletime/job_submit: loaded $CONFIG" || it_fail "(c) no reload logged"
it_info "(c) original config back after reconfigure: bob accepted"
it_pass
