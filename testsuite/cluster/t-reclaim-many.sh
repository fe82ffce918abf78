#!/bin/bash
# Many owners at once with preempt/idletime (issue 14, goal 1; doc/design/notice-and-release.md,
# section 8). a100-east (a100-[1-2], 4 GPUs each) is full of 8 one-GPU idle-time jobs of carol
# that save 1-160 MiB on the notice and call release(); 2 more idle-time jobs wait for a100-1.
# Two guaranteed jobs of 4 GPUs (alice/team-a, bob/team-b) are submitted together:
#  (a) every victim of both owners gets its notice before either owner starts: one scheduling
#      pass reclaims both nodes (Slurm's fail_by_part looks at one owner per pass: without the
#      hold the second owner's victims were notified only after the first owner ran);
#  (b) exactly 8 victims, none twice; slurmctld logs a node hold for each owner, and a held
#      owner's candidate searches skip the jobs off its held node (off_hold);
#  (c) the queued idle-time jobs never start on a held node while its victims leave one by one;
#  (d) an owner with its own ReqNodeList (-w) is never held (it keeps Slurm's behaviour);
#  (e) a victim spanning both nodes is not held for a one-node owner (a 2-node hold would make it
#      a 2-node job: BadConstraints, never started); the owner runs on one node;
#  (f) a held node that is drained ends the hold while its victim is still in GraceTime: the owner
#      runs where capacity frees instead of waiting for the victim to leave (a drained node is up,
#      so a hold that checked only for down nodes kept the owner pinned to it for 70 s or more);
#  (g) two one-GPU owners of different quotas on one node: each victim's record names its own
#      owner (slurmctld's note in its SystemComment), which a user cannot forge.
# cluster-args: --config etc/idletime.json --extra-conf testsuite/cluster/preempt-idletime.conf
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=../../bench/reclaim/lib.sh
. "$IC_SRC/../../bench/reclaim/lib.sh"
it_begin
scontrol show config | grep -q '^PreemptType *= *preempt/idletime' ||
	it_fail "needs PreemptType=preempt/idletime: start the cluster with this test's cluster-args (run-suites.sh does)"
rc_env || it_fail "idletime is not installed in $RC_PREFIX"
log=$IC_DIR/log/slurmctld.log

# fill NODE...: 4 one-GPU victims per node (saves 1, 48, 96, 160 MiB), all ready; ids in $vic.
fill() {
	local node mb v
	vic=()
	for node in "$@"; do
		for mb in 1 48 96 160; do
			v=$(it_submit carol -J many-v --open-mode=append --idle-resources=only -w "$node" --gres=gpu:a100:1 \
				"$RC_JOBS/probe-exec.sh" --on-notice release --save-mb "$mb") || it_fail "victim sbatch failed"
			vic+=("$v")
		done
	done
	for v in "${vic[@]}"; do
		it_wait_state "$v" RUNNING 120 || it_fail "victim $v never ran (Reason=$(it_job_field "$v" Reason))"
		rc_wait_line "$(rc_out many-v "$v")" '^ready ' 60 || it_fail "victim $v not ready"
	done
}

fill a100-1 a100-2
queued=()
for _ in 1 2; do
	queued+=("$(it_submit carol -J many-q --idle-resources=only -w a100-1 --gres=gpu:a100:1 "$RC_JOBS/owner.sh" 600)") ||
		it_fail "queued idle-time sbatch failed"
done
m=$(wc -l <"$log")
oa=$(it_submit alice -J many-o --quota=team-a --gres=gpu:a100:4 "$RC_JOBS/owner.sh" 600) || it_fail "alice's sbatch failed"
ob=$(it_submit bob -J many-o --quota=team-b --gres=gpu:a100:4 "$RC_JOBS/owner.sh" 600) || it_fail "bob's sbatch failed"
for o in "$oa" "$ob"; do
	rc_wait_line "$(rc_out many-o "$o")" '^started ' 120 || it_fail "owner $o never started (Reason=$(it_job_field "$o" Reason))"
done
first=$(rc_word "$(rc_out many-o "$oa")" started)
b=$(rc_word "$(rc_out many-o "$ob")" started)
rc_le "$first" "$b" || first=$b

# (a) and (b). Slurm alone picks the second owner's victims only once the first owner could
# start, i.e. after the last victim on its node released; with the hold every notice comes first.
last_notice=0 victims=0 node_free=()
for i in "${!vic[@]}"; do
	v=${vic[$i]} out=$(rc_out many-v "${vic[$i]}")
	c=$(grep -c '^notice' "$out")
	[ "$c" = 1 ] || it_fail "victim $v got $c notices (exactly 1 wanted): $(tr '\n' '|' <"$out")"
	rc_wait_line "$out" '^released ' 30 || it_fail "victim $v did not release"
	n=$(rc_word "$out" notice) r=$(rc_word "$out" released) k=$((i / 4))
	rc_le "$n" "$last_notice" || last_notice=$n
	[ -n "${node_free[$k]:-}" ] && rc_le "$r" "${node_free[$k]}" || node_free[k]=$r
	victims=$((victims + 1))
done
it_assert_eq 8 "$victims" "victims"
free_first=${node_free[0]}
rc_le "$free_first" "${node_free[1]}" || free_first=${node_free[1]}
rc_le "$last_notice" "$free_first" ||
	it_fail "a victim got its notice $(rc_sub "$last_notice" "$free_first") s after every victim of one node had released: the owners reclaimed one after the other"
for o in "$oa" "$ob"; do
	tail -n +"$((m + 1))" "$log" | grep -q "idletime/preempt: JobId=$o waits for its victims .* held for it" ||
		it_fail "no node hold logged for owner $o"
done
# While an owner waited, its candidate searches skipped the jobs off its held node (every other
# running job is on the other node: the other owner's victims): preempt/idletime's summary line
# counts them as off_hold once the calls pause.
off_hold_seen() { tail -n +"$((m + 1))" "$log" | grep -Eq 'idletime/preempt: preemptable\(\) calls=[0-9]+ .*; off_hold=[1-9][0-9]*'; }
ic_poll 70 off_hold_seen >/dev/null ||
	it_fail "no preemptable() summary with off_hold > 0 after the owners ran: $(tail -n +"$((m + 1))" "$log" | grep -o 'preemptable() calls=.*' | tr '\n' '|')"
# (c)
for q in "${queued[@]}"; do
	it_assert_eq PENDING "$(it_job_field "$q" JobState)" "queued idle-time job $q while the owners run"
	[ ! -s "$(rc_out many-q "$q")" ] || it_fail "queued idle-time job $q ran during the reclaim: $(tr '\n' '|' <"$(rc_out many-q "$q")")"
done
it_info "all 8 notices $(rc_sub "$free_first" "$last_notice") s before the first node was free; both owners ran $(rc_sub "$first" "$last_notice") s after the last notice; queued jobs still pending"
it_cleanup_jobs || it_fail "jobs left after round 1"

# (d) an owner that names its node itself is left as Slurm would treat it.
fill a100-2
m=$(wc -l <"$log")
ow=$(it_submit bob -J many-o --quota=team-b -w a100-2 --gres=gpu:a100:4 "$RC_JOBS/owner.sh" 600) || it_fail "bob's -w sbatch failed"
rc_wait_line "$(rc_out many-o "$ow")" '^started ' 120 || it_fail "owner $ow (-w a100-2) never started"
it_assert_eq a100-2 "$(it_job_field "$ow" ReqNodeList)" "ReqNodeList of $ow"
! tail -n +"$((m + 1))" "$log" | grep -q "JobId=$ow waits for its victims" || it_fail "owner $ow with its own ReqNodeList was held"
it_cleanup_jobs || it_fail "jobs left after round 2"

# (e) one idle-time job on both nodes (4 GPUs each) is the only victim of a one-node owner.
wide=$(it_submit carol -J many-v --open-mode=append --idle-resources=only -N2 -w a100-1,a100-2 --gres=gpu:a100:4 \
	"$RC_JOBS/probe-exec.sh" --on-notice release --save-mb 1) || it_fail "2-node victim sbatch failed"
it_wait_state "$wide" RUNNING 120 || it_fail "2-node victim $wide never ran (Reason=$(it_job_field "$wide" Reason))"
rc_wait_line "$(rc_out many-v "$wide")" '^ready ' 60 || it_fail "2-node victim $wide not ready"
m=$(wc -l <"$log")
o1=$(it_submit alice -J many-o --quota=team-a --gres=gpu:a100:4 "$RC_JOBS/owner.sh" 600) || it_fail "alice's sbatch failed"
rc_wait_line "$(rc_out many-o "$o1")" '^started ' 120 ||
	it_fail "one-node owner $o1 never started (Reason=$(it_job_field "$o1" Reason), NumNodes=$(it_job_field "$o1" NumNodes))"
it_assert_eq 1 "$(it_job_field "$o1" NumNodes)" "NumNodes of $o1"
! tail -n +"$((m + 1))" "$log" | grep -q "JobId=$o1 waits for its victims" || it_fail "owner $o1 was held on its 2-node victim's nodes"
it_cleanup_jobs || it_fail "jobs left after round 3"

# (f) bob's guaranteed job fills a100-2; carol's idle-time job on a100-1 ignores its notice (it
# leaves only at the end of GraceTime, 30 s); a queued idle-time job keeps 2 jobs in the queue, as
# on any site, so the queue sort sweeps the holds. alice's owner is held on a100-1; then a100-1 is
# drained and a100-2 freed.
drained=
trap '[ -z "$drained" ] || scontrol update nodename="$drained" state=resume >/dev/null 2>&1; it_cleanup_jobs' EXIT
g=$(it_submit bob -J many-g --quota=team-b -w a100-2 --gres=gpu:a100:4 "$RC_JOBS/owner.sh" 600) || it_fail "bob's sbatch failed"
it_wait_state "$g" RUNNING 60 || it_fail "bob's job $g never ran (Reason=$(it_job_field "$g" Reason))"
v=$(it_submit carol -J many-v --open-mode=append --idle-resources=only -w a100-1 --gres=gpu:a100:4 \
	"$RC_JOBS/probe-exec.sh" --on-notice ignore) || it_fail "ignoring victim sbatch failed"
it_wait_state "$v" RUNNING 60 || it_fail "victim $v never ran (Reason=$(it_job_field "$v" Reason))"
rc_wait_line "$(rc_out many-v "$v")" '^ready ' 60 || it_fail "victim $v not ready"
it_submit carol -J many-q --idle-resources=only -w a100-1 --gres=gpu:a100:1 "$RC_JOBS/owner.sh" 600 >/dev/null ||
	it_fail "queued idle-time sbatch failed"
m=$(wc -l <"$log")
o=$(it_submit alice -J many-o --quota=team-a --gres=gpu:a100:4 "$RC_JOBS/owner.sh" 600) || it_fail "alice's sbatch failed"
held_on_a100_1() { tail -n +"$((m + 1))" "$log" | grep -q "JobId=$o waits for its victims (JobId=$v first): their nodes (a100-1)"; }
ic_poll 30 held_on_a100_1 ||
	it_fail "owner $o was not held on a100-1 for victim $v"
drained=a100-1
scontrol update nodename=a100-1 state=drain reason="t-reclaim-many (f)" || it_fail "drain a100-1"
t0=$(rc_now)
scancel "$g" || it_fail "scancel $g"
rc_wait_line "$(rc_out many-o "$o")" '^started ' 25 ||
	it_fail "owner $o did not start within 25 s of a100-2 being freed while its held node a100-1 was drained (Reason=$(it_job_field "$o" Reason), ReqNodeList=$(it_job_field "$o" ReqNodeList))"
it_assert_eq a100-2 "$(it_job_field "$o" NodeList)" "NodeList of $o"
it_assert_eq RUNNING "$(it_job_field "$v" JobState)" "victim $v (in GraceTime) when owner $o started"
tail -n +"$((m + 1))" "$log" | grep -q "JobId=$o waits for a held node that is down, drained or failed: its nodes are no longer held" ||
	it_fail "no line says owner $o's hold ended on the drained node"
it_info "owner started $(rc_sub "$(rc_word "$(rc_out many-o "$o")" started)" "$t0") s after a100-2 was freed, its held node drained, victim $v still in GraceTime"
it_cleanup_jobs || it_fail "jobs left after round 4"
scontrol update nodename=a100-1 state=resume || it_fail "resume a100-1"
drained=

# (g) two one-GPU owners of different quotas reclaim on one node (a100-2 is full of guaranteed
# jobs): each victim's record names the owner slurmctld picked it for (preempt/idletime's note in
# the victim's SystemComment), not the first owner that started on the node (before: one of the
# two named the other team); and a user cannot write that note.
hooklog=$IC_LOGD/ft-hook.log
for spec in "alice team-a 3" "bob team-b 1"; do
	read -r u q n <<<"$spec"
	g=$(it_submit "$u" -J many-g --quota="$q" -w a100-2 --gres=gpu:a100:"$n" "$RC_JOBS/owner.sh" 600) ||
		it_fail "$u's filler sbatch failed"
	it_wait_state "$g" RUNNING 60 || it_fail "$u's filler $g never ran (Reason=$(it_job_field "$g" Reason))"
done
fill a100-1
h=$(wc -l <"$hooklog")
oa=$(it_submit alice -J many-o --quota=team-a --gres=gpu:a100:1 "$RC_JOBS/owner.sh" 600) || it_fail "alice's sbatch failed"
ob=$(it_submit bob -J many-o --quota=team-b --gres=gpu:a100:1 "$RC_JOBS/owner.sh" 600) || it_fail "bob's sbatch failed"
for pair in "$oa team-a" "$ob team-b"; do
	read -r o q <<<"$pair"
	rc_wait_line "$(rc_out many-o "$o")" '^started ' 120 || it_fail "owner $o never started (Reason=$(it_job_field "$o" Reason))"
	mine=()
	for v in "${vic[@]}"; do
		scontrol show job -o "$v" | grep -Eq "SystemComment=idletime: preempted at [0-9]+ for job $o( |$)" && mine+=("$v")
	done
	it_assert_eq 1 "${#mine[@]}" "victims whose SystemComment names owner $o"
	v=${mine[0]}
	named() { tail -n +"$((h + 1))" "$hooklog" | grep -q "job $v: reclaimed by quota $q (job $o)"; }
	ic_poll 60 named || it_fail "victim $v's record does not name owner $o of $q: $(tail -n +"$((h + 1))" "$hooklog" | grep "job $v: reclaimed" | tr '\n' '|')"
	# Hostile: the note is slurmctld's alone; carol (the victim's user) cannot rewrite it.
	forged="idletime: preempted at $(date +%s) for job 1"
	runuser -u carol -- env SLURM_CONF="$SLURM_CONF" scontrol update jobid="$v" SystemComment="$forged" >/dev/null 2>&1 &&
		it_fail "carol could update SystemComment of her job $v"
	scontrol show job -o "$v" | grep -q "SystemComment=idletime: preempted at [0-9]* for job $o" ||
		it_fail "victim $v's note changed after carol's update: $(scontrol show job -o "$v" | grep -o 'SystemComment=.*')"
done
it_info "owners $oa (team-a) and $ob (team-b) on a100-1: each victim's record names its own owner"
it_cleanup_jobs || it_fail "jobs left after round 5"
it_pass
