#!/bin/bash
# README's three sbatch lines, verbatim, as bob (account team-b, one quota) from a directory with a
# small train.sh, on a cluster rendered from the config (no Default=YES partition):
#   sbatch --idle-resources=only --gres=gpu:a100:2 train.sh   -> idle partitions of team-b's pools
#   sbatch --idle-resources=acceptable train.sh               -> quota-team-b first, then idle
#   sbatch train.sh                                           -> quota-team-b (guaranteed only)
# each job runs and ends COMPLETED with train.sh's output; the plain job was routed by
# job_submit/idletime (account team-b, partition quota-team-b, not preemptible). Then the same
# plain `sbatch train.sh` by a user whose account has no quota (frank with DefaultAccount
# readme-noquota, and with -A readme-noquota) is refused with one line naming the accounts that
# have quotas; frank's -p of a quota partition is left to Slurm (partition and account as given).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
it_begin
grep -q '^JobSubmitPlugins=idletime' "$IC_CONF" || it_fail "cluster runs without job_submit/idletime"
! scontrol show partition -o | grep -q 'Default=YES' || it_fail "a partition is Default=YES: $(scontrol show partition -o | grep Default=YES)"
NOQ=readme-noquota
restore() {
	sacctmgr -i modify user frank set DefaultAccount=team-a >/dev/null 2>&1 || true
	sacctmgr -i delete user frank account=$NOQ >/dev/null 2>&1 || true
	sacctmgr -i delete account $NOQ >/dev/null 2>&1 || true
}
trap 'restore; it_cleanup_jobs' EXIT

# A directory of the user's with train.sh, as a user would have it.
workdir() {
	local d=$IC_DIR/out/readme-$1-$$
	rm -rf "$d"
	install -d -o "$1" -m 755 "$d"
	printf '#!/bin/bash\necho "train.sh on $(hostname) in $SLURM_JOB_PARTITION"\nsleep 4\necho done\n' >"$d/train.sh"
	chown "$1" "$d/train.sh"
	echo "$d"
}
# as USER DIR CMD...: CMD as USER in DIR, login-like environment; stdout+stderr.
as() {
	local user=$1 dir=$2
	shift 2
	(cd "$dir" && runuser -u "$user" -- env -i HOME="$dir" USER="$user" LOGNAME="$user" SHELL=/bin/bash \
		PATH="$IC_SLURM_PATH${PREFIX:-/usr/local}/bin:/usr/bin:/bin" LANG=C.UTF-8 SLURM_CONF="$SLURM_CONF" "$@" 2>&1)
}
# submit LINE: the README line (word-split) as bob; prints the job id.
BOBDIR=$(workdir bob)
submit() {
	local out id
	# shellcheck disable=SC2086 # the README line, word by word
	out=$(as bob "$BOBDIR" $1) || it_fail "'$1' as bob failed: $out"
	id=$(sed -n 's/^Submitted batch job \([0-9][0-9]*\)$/\1/p' <<<"$out")
	[ -n "$id" ] || it_fail "'$1': no job id in: $out"
	echo "$id"
}

only=$(submit "sbatch --idle-resources=only --gres=gpu:a100:2 train.sh")
acc=$(submit "sbatch --idle-resources=acceptable train.sh")
plain=$(submit "sbatch train.sh")
it_assert_eq "team-b" "$(it_job_field "$plain" Account)" "account of the plain job $plain"
it_assert_eq "quota-team-b" "$(it_job_field "$plain" Partition)" "partition of the plain job $plain"
# within JOB ALLOWED...: every partition of the job (the list, or the one it started in) is allowed.
within() {
	local p id=$1
	shift
	for p in $(it_job_field "$id" Partition | tr ',' ' '); do
		[[ " $* " == *" $p "* ]] || it_fail "job $id in partition $p (allowed: $*)"
	done
}
within "$only" idle-a100-east idle-a100-west
within "$acc" quota-team-b idle-a100-east idle-a100-west
for id in "$only" "$acc" "$plain"; do
	it_wait_state "$id" COMPLETED 90 || it_fail "job $id did not complete: $(scontrol show job -o "$id" | grep -o 'JobState=[^ ]*\|Reason=[^ ]*' | tr '\n' ' ')"
	grep -q '^done$' "$BOBDIR/slurm-$id.out" || it_fail "job $id: train.sh output: $(cat "$BOBDIR/slurm-$id.out" 2>&1)"
done
# slurmctld sends job records to slurmdbd through its own queue: right after COMPLETED, sacct can
# still show nothing on a loaded machine (CI, 2026-12-06: '' for a job that had run). Waits for it.
sacct_part() { sacct -n -X -P -j "$1" -o Partition 2>/dev/null | head -n1; }
sacct_has() { [ -n "$(sacct_part "$1")" ]; }
ic_poll 30 sacct_has "$plain" || true  # the assertion below says what sacct shows
it_assert_eq "quota-team-b" "$(sacct_part "$plain")" "sacct partition of plain job $plain"
grep -q "in quota-team-b$" "$BOBDIR/slurm-$plain.out" || it_fail "plain job ran elsewhere: $(head -n1 "$BOBDIR/slurm-$plain.out")"
it_info "only $only, acceptable $acc, plain $plain (quota-team-b) completed"

# A user whose account has no quota: one line naming the accounts with quotas.
sacctmgr -i add account $NOQ Description="t-readme-sbatch" >/dev/null || it_fail "sacctmgr add account $NOQ"
sacctmgr -i add user frank account=$NOQ >/dev/null || it_fail "sacctmgr add user frank account=$NOQ"
sacctmgr -i modify user frank set DefaultAccount=$NOQ >/dev/null || it_fail "sacctmgr modify user frank"
ic_poll 20 eval '[[ $(scontrol show assoc_mgr users=frank flags=users 2>/dev/null) == *DefAccount=$NOQ* ]]' ||
	it_fail "slurmctld's cache did not get frank's DefaultAccount $NOQ"
FRANKDIR=$(workdir frank)
WANT="idletime: no partition given and account \"$NOQ\" has no idletime quota; submit with -A ACCOUNT of a quota (accounts with quotas: team-a, team-b, team-c, team-h, team-x, team-cpu) or name a partition with -p"
for args in "sbatch train.sh" "sbatch -A $NOQ train.sh"; do
	# shellcheck disable=SC2086
	if out=$(as frank "$FRANKDIR" $args); then it_fail "'$args' by frank ($NOQ) was accepted: $out"; fi
	grep -qF "sbatch: error: $WANT" <<<"$out" || it_fail "'$args' by frank: $out"
	[ "$(grep -cF 'idletime:' <<<"$out")" = 1 ] || it_fail "'$args': not one line: $out"
	it_info "'$args' refused: $(grep -F 'idletime:' <<<"$out")"
done
# Explicit -p is Slurm's business (AllowAccounts; without EnforcePartLimits the job pends): the
# job keeps its partition and account, and idletime says nothing.
out=$(as frank "$FRANKDIR" sbatch -p quota-team-b train.sh) || true
! grep -q 'idletime:' <<<"$out" || it_fail "idletime judged a job with -p: $out"
id=$(sed -n 's/^Submitted batch job \([0-9][0-9]*\)$/\1/p' <<<"$out")
if [ -n "$id" ]; then
	it_assert_eq "quota-team-b $NOQ" "$(it_job_field "$id" Partition) $(it_job_field "$id" Account)" "job $id with -p"
	scancel "$id"
fi
it_pass
