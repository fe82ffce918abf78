#!/bin/bash
# Bad fault-tolerance input.
# (a) sbatch --max-restarts=-1, --ft-policy=bogus, --hang-timeout=abc, --run-type=x: sbatch exits
#     non-zero with one idletime line naming the option and what is allowed (SPANK plugin; sbatch
#     adds its own "Invalid --OPT argument" line), no job exists in squeue or sacct.
# (b) an invalid regex in the site config: `idletime validate` exits 2 naming
#     $.fault_tolerance.retryable_patterns[1]; the hook refuses that config, logs why, and keeps the
#     last good one. The hook's config is a copy made here (wrapper swapped for the test, restored
#     on exit) whose fault_tolerance makes exit code 42 retryable (built-in defaults: permanent).
#     A job exiting 42 is retried once (--max-restarts=1) before the break, and again after it.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=ft-lib.sh
. "$IC_SRC/ft-lib.sh"
it_begin
ft_require_hook
J=$IT_JOBS_DIR/ft-job.sh

# (a)
reject() {
	local name=$1 needle=$2 out rc
	shift 2
	out=$(cd /tmp && runuser -u alice -- env SLURM_CONF="$SLURM_CONF" sbatch --parsable -J "ftbad-$name" \
		--output=/dev/null -p quota-team-a "$@" "$J" exit 0 2>&1) && rc=0 || rc=$?
	[ "$rc" -ne 0 ] || it_fail "$name: sbatch accepted the job ($out)"
	# One idletime line; sbatch itself adds "Invalid --OPT argument: VALUE" whenever a SPANK
	# option callback fails (plugstack.c), nothing else.
	it_assert_eq 1 "$(grep -c 'idletime/spank: ' <<<"$out")" "idletime lines printed by sbatch for $name ('$out')"
	[ -z "$(grep -v -e 'idletime/spank: ' -e '^sbatch: error: Invalid --[a-z-]* argument: ' <<<"$out")" ] ||
		it_fail "$name: unexpected output '$out'"
	grep -qF -- "$needle" <<<"$out" || it_fail "$name: sbatch said '$out', expected '$needle'"
	[ -z "$(squeue -h --name="ftbad-$name" -o %i)" ] || it_fail "$name: a job exists in squeue"
	[ -z "$(sacct -n -X -a --name="ftbad-$name" -o JobID 2>/dev/null)" ] || it_fail "$name: a job exists in sacct"
	it_info "$name: rc=$rc: $out"
}
reject count "--max-restarts=-1 is invalid (allowed: a non-negative integer" --max-restarts=-1
reject policy "--ft-policy=bogus is invalid (allowed: none, exit-code, exit-code-and-error-msg)" --ft-policy=bogus
reject hang "--hang-timeout=abc is invalid (allowed: a non-negative integer" --hang-timeout=abc
reject runtype "--run-type=x is invalid (allowed: sync, async)" --run-type=x

# (b) the hook on a config of this test
command -v jq >/dev/null || it_fail "jq is needed"
IDLETIME=$(dirname "$FT_RUN")/idletime
[ -x "$IDLETIME" ] || it_fail "no idletime tool at $IDLETIME"
site=$(sed -n 's/^exec [^ ]* --config \([^ ]*\) .*/\1/p' "$FT_HOOK_WRAPPER")
[ -f "$site" ] || it_fail "cannot find the hook's config in $FT_HOOK_WRAPPER"
D=$IC_DIR/t-ft-badinput
rm -rf "$D" && mkdir -p "$D"
CFG=$D/idletime.json
LAST=$D/last-good.json
jq '.fault_tolerance = {"max_restarts": 3, "policy": "exit-code", "retryable_exit_codes": [42],
	"retryable_patterns": ["NCCL error"], "backoff_initial": 1, "backoff_max": 2}' "$site" >"$CFG" || it_fail "jq"
"$IDLETIME" validate "$CFG" >/dev/null 2>&1 || it_fail "the good config does not validate: $("$IDLETIME" validate "$CFG" 2>&1)"
cp -p "$FT_HOOK_WRAPPER" "$D/wrapper.orig"
restore() { [ ! -f "$D/wrapper.orig" ] || mv -f "$D/wrapper.orig" "$FT_HOOK_WRAPPER"; it_cleanup_jobs; }
trap restore EXIT
sed -e "/^exec /s#--config [^ ]*#--config $CFG#" -e "/^exec /s# --last-good [^ ]*##" -e "/^exec /s#\$# --last-good $LAST#" \
	"$D/wrapper.orig" >"$D/wrapper.new"
chmod 755 "$D/wrapper.new" && mv "$D/wrapper.new" "$FT_HOOK_WRAPPER"
grep -q -- "--config $CFG .*--last-good $LAST\$" "$FT_HOOK_WRAPPER" || it_fail "wrapper not swapped: $(cat "$FT_HOOK_WRAPPER")"

retried_job() { # NAME: a job exiting 42 with --max-restarts=1; must be retried once, then fail (id in RJ)
	local id
	id=$(it_submit alice -J "$1" -p quota-team-a -t 5 --open-mode=append --max-restarts=1 "$J" exit 42) || it_fail "sbatch $1"
	ft_wait_final "$id" 120 || it_fail "job $id ($1) did not end"
	it_assert_eq 1 "$(it_job_field "$id" Restarts)" "restarts of $id ($1: exit 42 is retryable in the last good config)"
	ft_acct_has "$id" '"x":"max restarts exceeded (last cause: exit code 42)"' || it_fail "job $id ($1): $(ft_acct "$id")"
	RJ=$id
}
retried_job ft-goodcfg
a=$RJ
[ -f "$LAST" ] && cmp -s "$LAST" "$CFG" || it_fail "the hook did not save the good config in $LAST"
lines0=$(wc -l <"$FT_LOG")

jq '.fault_tolerance.retryable_patterns = ["NCCL error", "(unclosed"]' "$CFG" >"$CFG.new" && mv "$CFG.new" "$CFG"
err=$("$IDLETIME" validate "$CFG" 2>&1) && rc=0 || rc=$?
it_assert_eq 2 "$rc" "exit status of idletime validate on a bad regex ($err)"
grep -qF '$.fault_tolerance.retryable_patterns[1]' <<<"$err" || it_fail "validate did not name the pattern: $err"
it_info "idletime validate: rc=$rc: $(head -n1 <<<"$err")"

retried_job ft-badcfg
b=$RJ
refused=$(tail -n +"$((lines0 + 1))" "$FT_LOG" | grep -F "config $CFG invalid" | grep -F "refused, using the last good config saved in $LAST" | head -n1)
[ -n "$refused" ] || it_fail "no hook log line refusing the bad config: $(tail -n +"$((lines0 + 1))" "$FT_LOG" | head -n5)"
grep -qF 'retryable_patterns[1]' <<<"$refused" || it_fail "the refusal does not name the pattern: $refused"
grep -q '(unclosed' "$LAST" && it_fail "the bad config replaced the last good one"
it_info "job $a (good config) and $b (broken config) both retried once; hook: ${refused#* idletime/ft-hook: }"
# Control: without the cache the broken config leaves built-in defaults, where 42 is permanent.
rm -f "$LAST"
sed -i "/^exec /s#--last-good [^ ]*#--last-good $LAST.none#" "$FT_HOOK_WRAPPER"
lines1=$(wc -l <"$FT_LOG")
c=$(it_submit alice -J ft-nocache -p quota-team-a -t 5 --max-restarts=1 "$J" exit 42) || it_fail "sbatch control"
ft_wait_final "$c" 60 || it_fail "control job $c did not end"
it_assert_eq 0 "$(it_job_field "$c" Restarts)" "restarts of control job $c (built-in defaults: exit 42 permanent)"
tail -n +"$((lines1 + 1))" "$FT_LOG" | grep -qF "no usable last good config in $LAST.none: using built-in" ||
	it_fail "no hook log line for the defaults fallback: $(tail -n +"$((lines1 + 1))" "$FT_LOG" | head -n3)"
it_pass
