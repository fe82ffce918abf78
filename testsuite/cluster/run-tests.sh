#!/bin/bash
# Run the cluster tests (testsuite/cluster/t-*.sh), starting the cluster if needed.
# Usage: run-tests.sh [PATTERN...]   (a test runs when its name contains any PATTERN)
# Env: START_ARGS (extra start.sh arguments, word-split), IT_TEST_TIMEOUT (s per test, 900;
# a test's "# timeout: SECONDS" header line overrides it).
# Prints one line per test and a summary; exit 1 when any test failed. After every test all
# jobs are cancelled, so a failing test never leaves jobs for the next one; jobs that a killed
# run left are cancelled before the first test.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck disable=SC2086 # START_ARGS is a word list
"$here/start.sh" ${START_ARGS:-} >/dev/null || { echo "run-tests: the cluster did not start" >&2; exit 1; }
# shellcheck source=lib.sh
. "$here/lib.sh"

tests=()
for t in "$here"/t-*.sh; do
	[ -e "$t" ] || continue
	name=$(basename "${t%.sh}")
	if [ $# -gt 0 ]; then
		m=0
		for p in "$@"; do [[ $name == *"$p"* ]] && m=1; done
		[ $m = 1 ] || continue
	fi
	tests+=("$t")
done
[ ${#tests[@]} -gt 0 ] || { echo "run-tests: no test matches: $*" >&2; exit 1; }

# A run that was killed leaves its jobs in slurmctld's saved state (e.g. a half-done replay's),
# and slurmctld recovers them: cancel them before the first test.
left=$(squeue -h -o %i 2>/dev/null | wc -l)
if [ "$left" -gt 0 ]; then
	echo "run-tests: cancelling $left jobs left by an earlier run"
	it_cleanup_jobs || { echo "run-tests: jobs of an earlier run did not end" >&2; exit 1; }
fi

pass=0 fail=0 failed=()
for t in "${tests[@]}"; do
	name=$(basename "${t%.sh}")
	t0=$(date +%s)
	# A test may ask for more time in a header line "# timeout: SECONDS".
	limit=$(sed -n 's/^# timeout: *\([0-9][0-9]*\)$/\1/p' "$t" | head -n1)
	limit=${limit:-${IT_TEST_TIMEOUT:-900}}
	out=$(timeout --kill-after=10 "$limit" "$t" 2>&1)
	rc=$?
	last=$(grep -E "^(PASS|FAIL) $name" <<<"$out" | tail -n1)
	if [ $rc = 0 ] && [[ $last == "PASS $name" ]]; then
		pass=$((pass + 1))
		echo "PASS $name ($(($(date +%s) - t0)) s)"
	else
		fail=$((fail + 1))
		failed+=("$name")
		[ -n "$last" ] || last="FAIL $name: exit status $rc without a PASS/FAIL line"
		[ $rc != 124 ] || last="FAIL $name: timed out after $limit s"
		echo "$last ($(($(date +%s) - t0)) s)"
		printf '%s\n' "$out" | tail -n 30 | sed 's/^/    | /'
	fi
	it_cleanup_jobs || echo "run-tests: warning: jobs left after $name" >&2
done
echo "run-tests: $pass passed, $fail failed${failed[*]:+ (${failed[*]})}"
[ $fail = 0 ]
