#!/bin/bash
# idletime jobs / quota / --events through whole job lives on the real cluster; every column is
# asserted against what Slurm (scontrol, the FT record in AdminComment, sacct) reports:
#  A  alice, guaranteed 1 GPU on a100-2                       Running, In Quota
#  B  carol (team-c), idle-time 2 GPUs on a100-2              Running, Not in Quota, nodes hidden
#  C  alice, idle-time 4 GPUs on a100-1 (train_digits.py with the checkpoint library), preempted
#     twice by bob's guaranteed job: Resource Preempted while it waits, restarts P=2, Succeeded;
#     --events shows 3 runs and which checkpoint runs 1 and 2 resumed from
#  F  erin, exits 137 twice with --max-restarts=1             Restarting, then Failed (F=1, reason)
#  H  erin, hangs under idletime-run --hang-timeout=10        Restarting (hung), then Failed
#  (F and H run after C, on the CPU pool, so they change no GPU number.)
# Quota used/lent/borrowed/pending are checked at two moments against the GPUs Slurm allocated.
# Env: IDLETIME_BIN (default /usr/local/bin/idletime), IDLETIME_PREFIX (install prefix: the
# checkpoint library and the Python package; default: two levels above the ft hook).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=ft-lib.sh
. "$IC_SRC/ft-lib.sh"
it_begin
ft_require_hook
IT=${IDLETIME_BIN:-${PREFIX:-/usr/local}/bin/idletime}
CFG=${IDLETIME_TEST_CONFIG:-$(cd "$IC_SRC/../.." && pwd)/etc/idletime.json}
PREFIX=${IDLETIME_PREFIX:-$(dirname "$(dirname "$FT_RUN")")}
PY=$(it_python_dir "$PREFIX") && [ -n "$PY" ] || it_fail "no idletime-ckpt.pc under $PREFIX/lib/pkgconfig (make install?)"
TRAIN=$PY/idletime/examples/train_digits.py
J=$IT_JOBS_DIR/ft-job.sh
[ -x "$IT" ] || it_fail "no idletime tool at $IT"
[ -f "$TRAIN" ] || it_fail "no $TRAIN (make install?)"
[ -e "$PREFIX/lib/libidletime-ckpt.so.0" ] || it_fail "no $PREFIX/lib/libidletime-ckpt.so.0"
grep -q '^JobSubmitPlugins=idletime' "$IC_CONF" || it_fail "cluster runs without job_submit/idletime"

jobs_as() { local u=$1; shift; runuser -u "$u" -- env SLURM_CONF="$SLURM_CONF" IDLETIME_EXEC_PATH="${IDLETIME_EXEC_PATH:-}" "$IT" jobs --config="$CFG" "$@"; }
COLS='[.name,.user,.account,.quota,.tenant,.mode,.status,.status_text,.resources,.resources_text,.pool,.gpus,.restarts.preemptions,.restarts.failures,.nodes,.nodes_hidden]|join("|")'
# row USER JOBID [JQ]: the job's columns as USER sees them (default COLS)
row() { jobs_as "$1" --json | jq -r --argjson id "$2" ".jobs[] | select(.job_id == \$id) | ${3:-$COLS}"; }
quota_json() { "$IT" quota --config="$CFG" --json; }
qv() { jq -r ".quotas[] | select(.name == \"$2\") | $3" <<<"$1"; }
pv() { jq -r ".pools[] | select(.name == \"$2\") | $3" <<<"$1"; }
gpus_of() { it_job_gpus "$1"; }
# idle_gpus PARTITION: GPUs Slurm allocated to the jobs running in PARTITION now
idle_gpus() {
	local s=0 id
	for id in $(squeue -h -t R -p "$1" -o %i); do s=$((s + $(gpus_of "$id"))); done
	echo $s
}
ft_json() { ft_admin "$1" | sed 's/^idletime-ft://'; }
acct_json() { ft_acct "$1" | sed 's/^idletime-ft://'; }
# wait_status USER JOBID STATUS TIMEOUT: poll the view until the job shows STATUS (a key)
wait_status() {
	local deadline=$(($(date +%s) + $4)) s
	while :; do
		s=$(row "$1" "$2" .status)
		[ "$s" = "$3" ] && return 0
		[ "$(date +%s)" -lt "$deadline" ] || { echo "wait_status: job $2 is '$s', wanted $3 within $4 s" >&2; return 1; }
		sleep 0.3
	done
}
count() { grep -cE "$2" "$1" 2>/dev/null || true; }
wait_count() {
	local deadline=$(($(date +%s) + $4))
	until [ "$(count "$1" "$2")" -ge "$3" ]; do
		[ "$(date +%s)" -lt "$deadline" ] || { echo "wait_count: fewer than $3 /$2/ in $1 after $4 s" >&2; return 1; }
		sleep 0.2
	done
}

# ---- submit everything ----
a=$(it_submit alice -J sc-inq -p quota-team-a -w a100-2 --gres=gpu:1 -n1 "$IT_JOBS_DIR/sleep.sh" 900) || it_fail "sbatch A"
b=$(it_submit carol -J sc-nq -p idle-a100-west,idle-a100-east -w a100-2 --gres=gpu:2 -n2 "$IT_JOBS_DIR/sleep.sh" 900) || it_fail "sbatch B"
IT_SUBMIT_ENV="PYTHONPATH=$PY IDLETIME_CKPT_LIB=$PREFIX/lib/libidletime-ckpt.so.0 IDLETIME_MUNGE_SOCKET=$IC_SOCK"
c=$(it_submit alice -J sc-pre --idle-resources=only -w a100-1 --gres=gpu:a100:4 --open-mode=append \
	--wrap="exec /usr/bin/python3 $TRAIN --steps 900 --ckpt-every 25 --step-sleep 0.05 --out $IC_DIR/out/sc-pre-$RANDOM.params") ||
	it_fail "sbatch C"
unset IT_SUBMIT_ENV
cout=$IC_DIR/out/sc-pre-$c.out
for id in "$a" "$b" "$c"; do it_wait_state "$id" RUNNING 60 || it_fail "job $id never ran (Reason=$(it_job_field "$id" Reason))"; done
wait_count "$cout" '^saved ' 1 120 || it_fail "C ($c) saved no checkpoint: $(tail -n3 "$cout" | tr '\n' '|')"

# ---- moment 1: A In Quota, B and C Not in Quota ----
it_assert_eq "1|2|4" "$(gpus_of "$a")|$(gpus_of "$b")|$(gpus_of "$c")" "GPUs Slurm allocated to A|B|C"
it_assert_eq "a100-2|a100-2|a100-1" "$(it_job_field "$a" NodeList)|$(it_job_field "$b" NodeList)|$(it_job_field "$c" NodeList)" "nodes of A|B|C"
it_assert_eq "sc-inq|alice|team-a|team-a|acme|none|running|Running|in-quota|In Quota|a100-east|1|0|0|a100-2|false" \
	"$(row alice "$a")" "A as alice"
it_assert_eq "sc-nq|carol|team-c|team-c|acme|only|running|Running|not-in-quota|Not in Quota|a100-east|2|0|0|(shared)|true" \
	"$(row alice "$b")" "B as alice (ordinary user)"
it_assert_eq "sc-nq|carol|team-c|team-c|acme|only|running|Running|not-in-quota|Not in Quota|a100-east|2|0|0|a100-2|false" \
	"$(row root "$b")" "B as root"
it_assert_eq "sc-pre|alice|team-a|team-a|acme|only|running|Running|not-in-quota|Not in Quota|a100-east|4|0|0|(shared)|true" \
	"$(row alice "$c")" "C as its owner alice (not an operator)"
it_assert_eq "a100-1|false" "$(row root "$c" '[.nodes,.nodes_hidden]|join("|")')" "C as root"
# SlurmUser is an operator too
su=$(scontrol show config | sed -n 's/^SlurmUser *= *\([^(]*\).*/\1/p')
[ "$su" = root ] || it_assert_eq "a100-1" "$(row "$su" "$c" .nodes)" "C as SlurmUser $su"
idle=$(idle_gpus idle-a100-east)
it_assert_eq 6 "$idle" "GPUs running in idle-a100-east (B+C)"
q=$(quota_json)
# team-a: used 1, free 3, its own idle-time job C covers that share (own 3), borrowed 4;
# the rest 6-3 = 3 is charged to team-b's free share.
it_assert_eq "1|0|4|3" "$(qv "$q" team-a '[.used.gpus,.lent.gpus,.borrowed.gpus,.own_idle.gpus]|join("|")')" "team-a used|lent|borrowed|own (moment 1)"
it_assert_eq "0|3|0" "$(qv "$q" team-b '[.used.gpus,.lent.gpus,.borrowed.gpus]|join("|")')" "team-b used|lent|borrowed (moment 1)"
it_assert_eq "0|0|2" "$(qv "$q" team-c '[.used.gpus,.lent.gpus,.borrowed.gpus]|join("|")')" "team-c used|lent|borrowed (moment 1)"
it_assert_eq "$idle|0|3" "$(pv "$q" a100-east '[.idle_used.gpus,.unassigned.gpus,.lent.gpus]|join("|")')" "pool a100-east (moment 1)"

# ---- C preempted twice, resumed ----
for n in 1 2; do
	if [ $n = 2 ]; then
		it_wait_state "$c" RUNNING 60 || it_fail "C ($c) run 1 did not start"
		wait_count "$cout" '^resumed ' 1 120 || it_fail "C ($c) run 1 did not resume"
		saved=$(count "$cout" '^saved ')
		wait_count "$cout" '^saved ' $((saved + 1)) 120 || it_fail "C ($c) run 1 saved nothing"
		it_assert_eq "running|not-in-quota|4|1|0|a100-1" "$(row root "$c" '[.status,.resources,.gpus,.restarts.preemptions,.restarts.failures,.nodes]|join("|")')" "C running again after preemption 1"
	fi
	o=$(it_submit bob -J sc-owner --quota=team-b -w a100-1 --gres=gpu:a100:4 "$IT_JOBS_DIR/sleep.sh" 600) || it_fail "owner sbatch $n"
	it_wait_state "$o" RUNNING 60 || it_fail "owner $o did not start"
	it_wait_state "$c" PENDING 60 || it_fail "C ($c) not requeued after preemption $n"
	rc=$(it_job_field "$c" Restarts)
	it_assert_eq "$n" "$rc" "Slurm's restart count of C after preemption $n"
	ic_poll 30 sh -c "scontrol show job $c | grep -q '\"p\":$n,'" || it_fail "preemption $n not recorded: $(ft_admin "$c")"
	last=$(ft_json "$c" | jq -r '.h[-1] | [.k, .w] | join("|")')
	[[ $last == preempt\|* ]] || it_fail "last FT history entry of C: $last"
	got=$(row alice "$c" '[.status,.status_text,.resources,.resources_text,(.pool // ""),.gpus,.restarts.preemptions,.restarts.failures,(.nodes // ""),.reason]|join("|")')
	it_assert_eq "resource-preempted|Resource Preempted|none|||4|$n|0||${last#preempt|}" "$got" "C waiting after preemption $n"
	tl=$(jobs_as alice --user=alice --noheader | grep "^$c " | tr -s ' ' | sed -E 's/ +$//; s/ ([0-9]+m[0-9]+s|[0-9]+s)( |$)/ AGE\2/')
	it_assert_eq "$c sc-pre alice team-a only Resource Preempted - 4 $n/0 AGE -" "$tl" "table line of waiting C"
	if [ $n = 1 ]; then
		# moment 2: bob's owner job uses team-b's share, only B runs on idle capacity (team-a's
		# free share 3 covers it); C's 4 GPUs are team-a's pending demand.
		q=$(quota_json)
		it_assert_eq 2 "$(idle_gpus idle-a100-east)" "GPUs running in idle-a100-east (B)"
		it_assert_eq "4|$(gpus_of "$o")" "4|4" "GPUs of bob's owner job"
		it_assert_eq "1|2|0|4|1" "$(qv "$q" team-a '[.used.gpus,.lent.gpus,.borrowed.gpus,.pending.gpus,.pending_jobs]|join("|")')" "team-a used|lent|borrowed|pending|pending_jobs (moment 2)"
		it_assert_eq "4|0|0" "$(qv "$q" team-b '[.used.gpus,.lent.gpus,.borrowed.gpus]|join("|")')" "team-b used|lent|borrowed (moment 2)"
		it_assert_eq "0|0|2" "$(qv "$q" team-c '[.used.gpus,.lent.gpus,.borrowed.gpus]|join("|")')" "team-c used|lent|borrowed (moment 2)"
	fi
	scancel "$o"
	it_wait_state "$o" "CANCELLED|COMPLETED" 60 || it_fail "owner $o did not end"
	it_release_requeue_delay "$c" || it_fail "release the requeue delay of C"  # Slurm waits 121 s
done
it_wait_state "$c" RUNNING 60 || it_fail "C ($c) run 2 did not start"
it_wait_state "$c" COMPLETED 180 || it_fail "C ($c) is $(it_job_field "$c" JobState): $(tail -n3 "$cout" | tr '\n' '|')"
ft_wait_final "$c" 60 || it_fail "final FT record of C"
got=$(row alice "$c" '[.status,.status_text,.resources,(.pool // ""),.gpus,.restarts.preemptions,.restarts.failures,(.nodes // "")]|join("|")')
it_assert_eq "succeeded|Succeeded|none||4|2|0|" "$got" "C after it finished"
it_assert_eq 2 "$(count "$cout" '^resumed ')" "resumes in C's output"
grep -q '^done ' "$cout" || it_fail "C did not print done"

# --events of C: 3 runs in a100-east's idle partition; runs 1 and 2 resumed from the newest
# checkpoint of the run before (the FT record's "c"), which lies inside that run.
e=$("$IT" jobs --config="$CFG" --events "$c" --json) || it_fail "--events $c"
fin=$(acct_json "$c")
it_assert_eq "3|2|0" "$(jq -r '[(.runs|length), .preemptions, .failures]|join("|")' <<<"$e")" "C --events runs|P|F"
it_assert_eq "idle-a100-east|not-in-quota|4|a100-1" "$(jq -r '[.runs[].partition]|unique|join(",")' <<<"$e")|$(jq -r '[.runs[].resources]|unique|join(",")' <<<"$e")|$(jq -r '[.runs[].gpus]|unique|join(",")' <<<"$e")|$(jq -r '[.runs[].nodes]|unique|join(",")' <<<"$e")" "C runs: partition|resources|gpus|nodes"
for i in 0 1; do
	[[ $(jq -r ".runs[$i].ended" <<<"$e") == "preempted: reclaimed by quota team-b (job "* ]] || it_fail "run $i of C ended: $(jq -r ".runs[$i].ended" <<<"$e")"
	ck=$(jq -r ".h[] | select(.r == $i) | .c" <<<"$fin")
	it_assert_eq "$ck" "$(jq -r ".runs[$((i + 1))].resumed_from_checkpoint" <<<"$e")" "checkpoint run $((i + 1)) resumed from"
	s=$(jq -r ".runs[$i].start_time" <<<"$e"); t=$(jq -r ".runs[$i].end_time" <<<"$e")
	{ [ "$ck" -ge "$s" ] && [ "$ck" -le "$t" ]; } || it_fail "checkpoint $ck of run $i is outside the run [$s, $t]"
done
it_assert_eq "null|succeeded" "$(jq -r '[(.runs[0].resumed_from_checkpoint|tostring), .runs[2].ended]|join("|")' <<<"$e")" "C run 0 resumed from|run 2 ended"
jobs_as alice --events "$c" | grep -q "^Newest checkpoint: " || it_fail "--events text has no checkpoint line"

# ---- F: failed after retries; H: hung. Each shows Restarting during its backoff (10 s). ----
f=$(it_submit erin -J sc-fail -p quota-team-cpu -n1 -t 5 --max-restarts=1 "$J" exit 137) || it_fail "sbatch F"
h=$(it_submit erin -J sc-hang -p quota-team-cpu -n1 -t 5 --max-restarts=1 --hang-timeout=10 \
	--wrap="exec $FT_RUN -- $J hang") || it_fail "sbatch H"
for x in "$f|exit code 137" "$h|hung: no output or heartbeat for"; do
	id=${x%%|*} cause=${x#*|}
	wait_status erin "$id" restarting 90 || it_fail "job $id never showed Restarting"
	got=$(row erin "$id" '[.status_text,.resources,.restarts.preemptions,.restarts.failures,(.nodes // ""),.reason]|join("|")')
	rec=$(ft_json "$id" | jq -r '.h[-1] | [.w, .a] | join("|")')
	[[ $rec == "$cause"*"|restart" ]] || it_fail "FT record of $id during its backoff: $rec"
	[[ $got == "Restarting|none|0|1||${rec%|restart}; restarts in "* ]] || it_fail "job $id during its backoff: $got"
done
ft_wait_final "$f" 120 || it_fail "F ($f) did not end"
ft_wait_final "$h" 180 || it_fail "H ($h) did not end"
for x in "$f|exit code 137" "$h|hung: no output or heartbeat for"; do
	id=${x%%|*} cause=${x#*|}
	it_assert_eq "FAILED|1" "$(it_job_field "$id" JobState)|$(it_job_field "$id" Restarts)" "Slurm state|restarts of $id"
	want=$(acct_json "$id" | jq -r .x)
	[[ $want == "max restarts exceeded (last cause: $cause"* ]] || it_fail "final record of $id: $want"
	it_assert_eq "erin|team-cpu|team-cpu|acme|none|failed|Failed|none||0|1||$want" \
		"$(row erin "$id" '[.user,.account,.quota,.tenant,.mode,.status,.status_text,.resources,(.pool // ""),.restarts.preemptions,.restarts.failures,(.nodes // ""),.reason]|join("|")')" \
		"job $id after its retries (F = --max-restarts)"
	tl=$(jobs_as erin --user=erin --noheader | grep "^$id " | tr -s ' ' | sed -E 's/ +$//')
	pre="$id $(it_job_field "$id" JobName) erin team-cpu none Failed ($want) - 0 0/1 "
	[[ $tl == "$pre"* && ${tl#"$pre"} =~ ^[0-9]+(m[0-9]+)?s\ -$ ]] || it_fail "table line of $id: '$tl', expected '$pre<age> -'"
	ev=$("$IT" jobs --config="$CFG" --events "$id" --json)
	it_assert_eq "2|$want|restart,fail" "$(jq -r '[(.runs|length), .final_reason]|join("|")' <<<"$ev")|$(acct_json "$id" | jq -r '[.h[].a]|join(",")')" \
		"--events runs|final reason, FT actions of $id"
done
it_assert_eq "hung: |hung: " "$(jq -r '[.runs[].ended[0:6]]|join("|")' <<<"$ev")" "--events: how H's runs ended"
it_pass
