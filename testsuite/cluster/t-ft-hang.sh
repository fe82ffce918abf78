#!/bin/bash
# Hang detection by idletime-run: (a) a job that stops printing and heartbeating is stopped within
# hang-timeout + 10 s of its last sign of life and restarted, and with --max-restarts=1 ends FAILED
# with "max restarts exceeded (last cause: hung: ...)"; (b) a slow job that prints nothing for 30 s
# but heartbeats every 2 s under --hang-timeout=5 is never stopped and completes.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=ft-lib.sh
. "$IC_SRC/ft-lib.sh"
it_begin
ft_require_hook
J=$IT_JOBS_DIR/ft-job.sh
T=10
a=$(it_submit alice -J ft-hang -p quota-team-a -t 5 --open-mode=append --max-restarts=1 --hang-timeout=$T \
	--wrap="exec $FT_RUN -- $J hang") || it_fail "sbatch a"
b=$(it_submit alice -J ft-slow -p quota-team-a -t 5 --max-restarts=1 --hang-timeout=5 \
	--wrap="exec $FT_RUN -- $J slow 30 2") || it_fail "sbatch b"

ft_wait_final "$b" 90 || it_fail "slow job $b did not end"
it_assert_eq COMPLETED "$(it_job_field "$b" JobState)" "state of the slow heartbeating job $b"
it_assert_eq 0 "$(it_job_field "$b" Restarts)" "restarts of the slow job $b"
grep -q '^slow done after 1[0-9] heartbeats' "$(it_job_out "$b")" || it_fail "slow job output: $(tail -n2 "$(it_job_out "$b")")"

ft_wait_final "$a" 180 || it_fail "hung job $a did not end (Restarts=$(it_job_field "$a" Restarts))"
it_assert_eq FAILED "$(it_job_field "$a" JobState)" "state of hung job $a"
it_assert_eq 1 "$(it_job_field "$a" Restarts)" "restarts of hung job $a"
ft_acct_has "$a" 'max restarts exceeded (last cause: hung: no output or heartbeat for' ||
	it_fail "job $a: AdminComment $(ft_acct "$a")"
# Latency: last output (the "run N hang T" line) to the end of that run (sacct End of each record).
mapfile -t starts < <(awk '/^run [0-9]+ hang /{ print $4 }' "$(it_job_out "$a")")
mapfile -t ends < <(sacct -n -P -X -D -j "$a" -o End | while read -r e; do date -d "$e" +%s; done)
{ [ ${#starts[@]} = 2 ] && [ ${#ends[@]} = 2 ]; } || it_fail "expected 2 runs: starts ${starts[*]} ends ${ends[*]}"
for i in 0 1; do
	lat=$((ends[i] - starts[i]))
	{ [ $lat -ge $T ] && [ $lat -le $((T + 10)) ]; } || it_fail "run $i: stopped ${lat}s after its last output (allowed $T-$((T + 10)))"
	lats="$lats $lat"
done
it_info "hung job $a stopped${lats} s after its last output (hang-timeout $T s); slow job $b completed"
it_pass
