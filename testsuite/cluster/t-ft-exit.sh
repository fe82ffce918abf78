#!/bin/bash
# Fault tolerance by exit code and error message (EpilogSlurmctld idletime-ft-hook):
# (a) exit 137 (retryable) with --max-restarts=2 runs 3 times, then ends FAILED and its accounting
#     AdminComment says "max restarts exceeded (last cause: exit code 137 (SIGKILL))";
# (b) exit 1 (permanent) fails at once (Restarts=0, "permanent failure: exit code 1");
# (c) exit 1 after printing "NCCL error: unhandled system error" under idletime-run is retried
#     under --ft-policy=exit-code-and-error-msg (d) but not under --ft-policy=exit-code.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=ft-lib.sh
. "$IC_SRC/ft-lib.sh"
it_begin
ft_require_hook
J=$IT_JOBS_DIR/ft-job.sh
P=(-p quota-team-a -t 5 --open-mode=append)
a=$(it_submit alice -J ft-retry "${P[@]}" --max-restarts=2 "$J" exit 137) || it_fail "sbatch a"
b=$(it_submit alice -J ft-perm "${P[@]}" --max-restarts=2 "$J" exit 1) || it_fail "sbatch b"
c=$(it_submit alice -J ft-msg "${P[@]}" --max-restarts=1 --ft-policy=exit-code-and-error-msg \
	--wrap="exec $FT_RUN -- $J msg 1 'NCCL error: unhandled system error'") || it_fail "sbatch c"
d=$(it_submit alice -J ft-nomsg "${P[@]}" --max-restarts=1 --ft-policy=exit-code \
	--wrap="exec $FT_RUN -- $J msg 1 'NCCL error: unhandled system error'") || it_fail "sbatch d"

ft_wait_final "$b" 60 || it_fail "job $b did not end"
it_assert_eq FAILED "$(it_job_field "$b" JobState)" "state of permanent-failure job $b"
it_assert_eq 0 "$(it_job_field "$b" Restarts)" "restarts of permanent-failure job $b"
ft_acct_has "$b" '"x":"permanent failure: exit code 1"' || it_fail "job $b: AdminComment $(ft_acct "$b")"

ft_wait_final "$d" 60 || it_fail "job $d did not end"
it_assert_eq 0 "$(it_job_field "$d" Restarts)" "restarts of $d (exit-code policy ignores messages)"
ft_acct_has "$d" '"x":"permanent failure: exit code 1"' || it_fail "job $d: AdminComment $(ft_acct "$d")"

ft_wait_final "$c" 120 || it_fail "job $c did not end (Restarts=$(it_job_field "$c" Restarts))"
it_assert_eq FAILED "$(it_job_field "$c" JobState)" "state of $c"
it_assert_eq 1 "$(it_job_field "$c" Restarts)" "restarts of $c (message made exit 1 retryable)"
ft_acct_has "$c" 'max restarts exceeded (last cause: exit code 1, output matched retryable pattern' ||
	it_fail "job $c: AdminComment $(ft_acct "$c")"

ft_wait_final "$a" 240 || it_fail "job $a did not end (Restarts=$(it_job_field "$a" Restarts))"
it_assert_eq FAILED "$(it_job_field "$a" JobState)" "state of $a"
it_assert_eq 2 "$(it_job_field "$a" Restarts)" "restarts of $a"
runs=$(grep -c '^run ' "$(it_job_out "$a")")
it_assert_eq 3 "$runs" "runs of $a in its output"
ft_acct_has "$a" '"f":2,' || it_fail "job $a: failure counter: $(ft_acct "$a")"
ft_acct_has "$a" '"x":"max restarts exceeded (last cause: exit code 137 (SIGKILL))"' ||
	it_fail "job $a: AdminComment $(ft_acct "$a")"
gaps=$(awk '/^run /{ if (t) printf "%d ", $4 - t; t = $4 }' "$(it_job_out "$a")")
it_info "job $a: 3 runs, gaps between starts ${gaps}s (backoff 10 s, 20 s + scheduler pass)"
it_pass
