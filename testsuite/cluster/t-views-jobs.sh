#!/bin/bash
# idletime jobs / quota on the real cluster: a job In Quota, one Not in Quota; every column of
# both asserted; node names hidden from an ordinary user and shown to root; quota used/lent/
# borrowed equal to what runs (rules: idletime-quota(1)); filters, --format, bad input.
# Env: IDLETIME_BIN (default /usr/local/bin/idletime); the view programs are found by the
# dispatcher in IDLETIME_EXEC_PATH or the install's libexec dir.
. "$(dirname "$0")/lib.sh"
it_begin
IT=${IDLETIME_BIN:-${PREFIX:-/usr/local}/bin/idletime}
CFG=${IDLETIME_TEST_CONFIG:-$(cd "$IC_SRC/../.." && pwd)/etc/idletime.json}
[ -x "$IT" ] || it_fail "no idletime tool at $IT"
jobs_as() { local u=$1; shift; runuser -u "$u" -- env SLURM_CONF="$SLURM_CONF" IDLETIME_EXEC_PATH="${IDLETIME_EXEC_PATH:-}" "$IT" jobs --config="$CFG" "$@"; }
field() { jq -r --argjson id "$1" ".jobs[] | select(.job_id == \$id) | $2"; }

# alice: guaranteed 1 GPU in quota team-a.  carol (team-c, pool a100-west): idle-time job forced
# onto a100-1, so it runs in idle-a100-east on quota team-a's and team-b's unused share.
a=$(it_submit alice -J inq -p quota-team-a --gres=gpu:1 -n1 "$IT_JOBS_DIR/sleep.sh" 300) || it_fail "sbatch alice"
c=$(it_submit carol -J nq -p idle-a100-west,idle-a100-east -w a100-1 --gres=gpu:2 -n2 "$IT_JOBS_DIR/sleep.sh" 300) ||
	it_fail "sbatch carol"
it_wait_state "$a" RUNNING 60 || it_fail "alice's job $a never ran"
it_wait_state "$c" RUNNING 60 || it_fail "carol's job $c never ran"
na=$(it_job_field "$a" NodeList); nc=$(it_job_field "$c" NodeList)
it_assert_eq a100-1 "$nc" "node of carol's job"

j=$(jobs_as alice --json) || it_fail "idletime jobs --json as alice failed"
it_assert_eq 1 "$(jq -r .schema_version <<<"$j")" "schema_version"
# In Quota job, as its owner
it_assert_eq "inq|alice|team-a|team-a|acme|none|running|in-quota|In Quota|a100-east|1|0|0|$na|false" \
	"$(field "$a" '[.name,.user,.account,.quota,.tenant,.mode,.status,.resources,.resources_text,.pool,.gpus,.restarts.preemptions,.restarts.failures,.nodes,.nodes_hidden]|join("|")' <<<"$j")" \
	"alice's In Quota job as alice"
# Not in Quota job of another user, seen by an ordinary user: node names hidden
it_assert_eq "nq|carol|team-c|only|running|not-in-quota|Not in Quota|a100-east|2|(shared)|true" \
	"$(field "$c" '[.name,.user,.quota,.mode,.status,.resources,.resources_text,.pool,.gpus,.nodes,.nodes_hidden]|join("|")' <<<"$j")" \
	"carol's Not in Quota job as alice"
# the owner is not an operator either
it_assert_eq "(shared)" "$(jobs_as carol --json | field "$c" .nodes)" "carol's own Not in Quota job as carol"
# root sees the node
it_assert_eq "a100-1|false" "$(jobs_as root --json | field "$c" '[.nodes,.nodes_hidden]|join("|")')" "carol's job as root"

# The default table: every column of both lines.
t=$(jobs_as alice --user=alice,carol)
hdr=$(head -n1 <<<"$t" | tr -s ' ')
it_assert_eq "JOBID NAME USER QUOTA MODE STATUS RESOURCES GPUS RESTARTS(P/F) AGE NODES" "$hdr" "table header"
la=$(grep "^$a " <<<"$t" | tr -s ' ' | sed -E 's/ [0-9]+s | [0-9]+m[0-9]+s / AGE /')
it_assert_eq "$a inq alice team-a none Running In Quota 1 0/0 AGE $na" "$la" "table line of $a"
lc=$(grep "^$c " <<<"$t" | tr -s ' ' | sed -E 's/ [0-9]+s | [0-9]+m[0-9]+s / AGE /')
it_assert_eq "$c nq carol team-c only Running Not in Quota 2 0/0 AGE (shared)" "$lc" "table line of $c"

# Filters and --format (ended jobs of earlier tests stay listed for MinJobAge: filter by state)
it_assert_eq "$c" "$(jobs_as alice --quota=team-c --state=running --format='%i' --noheader)" "--quota=team-c --state=running"
it_assert_eq "$a" "$(jobs_as alice --user=alice --state=running --format='%i' --noheader)" "--user --state"
it_assert_eq "" "$(jobs_as alice --tenant=beta --state=running --format='%i' --noheader)" "--tenant=beta --state=running"
it_assert_eq "$c|Not in Quota|2|team-c" "$(jobs_as root --format='%i|%R|%b|%q' --noheader --quota=team-c --state=running)" "--format"
jobs_as alice --state=bogus >/dev/null 2>&1; it_assert_eq 2 $? "exit status of --state=bogus"
jobs_as alice --quota=nope >/dev/null 2>&1; it_assert_eq 2 $? "exit status of --quota=nope"
jobs_as alice --format='%Z' >/dev/null 2>&1; it_assert_eq 2 $? "exit status of --format=%Z"

# Quota accounting equals what runs: team-a used 1; idle-time usage on a100-east = carol's 2
# GPUs, charged to the free shares of team-a (3) and team-b (4): largest remainder gives 1 + 1.
q=$(runuser -u alice -- env SLURM_CONF="$SLURM_CONF" IDLETIME_EXEC_PATH="${IDLETIME_EXEC_PATH:-}" "$IT" quota --config="$CFG" --json) ||
	it_fail "idletime quota --json failed"
qv() { jq -r ".quotas[] | select(.name == \"$1\") | $2" <<<"$q"; }
pv() { jq -r ".pools[] | select(.name == \"$1\") | $2" <<<"$q"; }
gpus_c=$(it_job_gpus "$c")
it_assert_eq 2 "$gpus_c" "GPUs Slurm allocated to carol's job"
it_assert_eq "1|1|0" "$(qv team-a '[.used.gpus,.lent.gpus,.borrowed.gpus]|join("|")')" "team-a used|lent|borrowed"
it_assert_eq "0|1|0" "$(qv team-b '[.used.gpus,.lent.gpus,.borrowed.gpus]|join("|")')" "team-b used|lent|borrowed"
it_assert_eq "0|0|$gpus_c" "$(qv team-c '[.used.gpus,.lent.gpus,.borrowed.gpus]|join("|")')" "team-c used|lent|borrowed"
it_assert_eq "$gpus_c|0|$gpus_c" "$(pv a100-east '[.idle_used.gpus,.unassigned.gpus,.lent.gpus]|join("|")')" "pool a100-east"
# pending demand: a second team-a job beyond its 4-GPU quota pends and shows as pending
p=$(it_submit alice -J pend -p quota-team-a --gres=gpu:4 -n1 "$IT_JOBS_DIR/sleep.sh" 300) || it_fail "sbatch pend"
it_wait_reason "$p" 'QOSGrpGRES|Resources|Priority' 30 || it_fail "job $p did not pend"
q=$("$IT" quota --config="$CFG" --json)
it_assert_eq "4|1" "$(qv team-a '[.pending.gpus,.pending_jobs]|join("|")')" "team-a pending"
it_assert_eq "queuing|none" "$(jobs_as alice --json | field "$p" '[.status,.resources]|join("|")')" "pending job"
it_pass
