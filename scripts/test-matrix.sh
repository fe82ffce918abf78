#!/bin/sh
# The Slurm version matrix: for each SERIES (default 24.11 26.05; Debian trixie's and sid's Slurm,
# built from source into /opt/slurm/<version> by get-slurm.sh and reused later) builds idletime
# against it with -Werror, runs the unit tests, installs it into /opt/idletime-SERIES, checks the
# version guard both ways against Debian 12's Slurm 22.05, and runs the cluster tests that
# exercise each plugin on a local cluster of that Slurm (start.sh --slurm). Prints the time of
# every stage. Run by scripts/test-all.sh after the full suite on Debian 12's Slurm 22.05.
# Usage (root): scripts/test-matrix.sh [SERIES...]     Exit 0 only when everything passed.
# Env: MATRIX_TESTS (cluster tests, substrings of testsuite/cluster/t-*.sh names).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
# One test per plugin path: submission routing (job_submit + SPANK), preemption with notice and
# release, resume, fault-tolerance hook, views, the scheduling plugins (preempt, site_factor).
TESTS=${MATRIX_TESTS:-t-smoke t-readme-sbatch t-reclaim-release t-reclaim-resume t-reclaim-many t-ckpt-notice t-ft-exit t-views-jobs t-sched-minimal}
T0=$(date +%s); TS=$T0
step() {
    now=$(date +%s)
    printf '\n==== idletime/test-matrix: %s (previous stage %ss, total %ss, %s) ====\n' "$*" $((now - TS)) $((now - T0)) "$(date -u +%H:%M:%S)"
    TS=$now
}
[ $# -gt 0 ] || set -- 24.11 26.05
[ -x "$top/configure" ] && [ "$top/configure" -nt "$top/configure.ac" ] || "$top/scripts/bootstrap.sh"
# Debian 12's Slurm 22.05 and idletime built for it (test-all.sh's _build), for the guard checks.
spank2205=$top/_build/plugins/spank/.libs/spank_idletime.so
# Ports below the ephemeral range (32768): series k uses 25800 + 3000 k + 1000 i, i = 1..3.
port=25800
passed="" untested=""
for series in "$@"; do
    step "Slurm $series: get its source and build it into /opt/slurm (reused when built before)"
    # Exit 3: neither Debian's archive nor a SchedMD tarball could provide the source (an archive
    # outage, not an idletime failure). Reported as NOT TESTED below; IDLETIME_MATRIX_STRICT=1
    # makes it a failure.
    rc=0; slurm=$("$top/scripts/get-slurm.sh" "$series") || rc=$?
    if [ $rc = 3 ] && [ "${IDLETIME_MATRIX_STRICT:-0}" != 1 ]; then
        echo "test-matrix: Slurm $series NOT TESTED: its source could not be obtained (see above)"
        untested="$untested $series"
        continue
    fi
    [ $rc = 0 ] || exit $rc
    src=$("$top/scripts/get-slurm.sh" --src "$series")
    release=$(basename "$(readlink -f "$slurm")")
    # Build and state dirs are named for the exact release: a point release (24.11.5 -> 24.11.6)
    # gets fresh ones (a state dir belongs to one Slurm, start.sh refuses another).
    build=$top/_build-slurm-$release
    step "Slurm $series: build idletime against $slurm (-Werror)"
    mkdir -p "$build"
    (cd "$build" && { [ -f Makefile ] || "$top/configure" --enable-werror --with-slurm="$(readlink -f "$slurm")" --with-slurm-src="$src" \
        --prefix="/opt/idletime-$series" >configure.out; } && make -j2 >/dev/null)
    grep -q "slurm: *$release in" "$build/configure.out" || { echo "test-matrix: configure in $build did not find Slurm $release"; exit 1; }
    step "Slurm $series: unit tests"
    make -C "$build" -j2 check TESTS= >/dev/null
    make -C "$build" check >/dev/null || { find "$build" -name '*.log' -newer "$build/Makefile" \
        -exec grep -l -E '^(FAIL|ERROR)' {} + | xargs -r tail -n 30; exit 1; }
    grep -h '^# \(PASS\|FAIL\|ERROR\)' "$build/test-suite.log"
    step "Slurm $series: install into /opt/idletime-$series; version guard both ways"
    make -C "$build" install >/dev/null
    "$top/testsuite/matrix/version-guard.sh" /usr/bin/sbatch "/opt/idletime-$series/lib/idletime/slurm/spank_idletime.so" \
        "$release" "22.05 (libslurm API 38)"
    if [ -f "$spank2205" ]; then
        "$top/testsuite/matrix/version-guard.sh" "$slurm/bin/sbatch" "$spank2205" 22.05.8 "$series"
    else
        echo "version-guard: NOT CHECKED the other way: no $spank2205 (build Debian 12's first: scripts/build.sh _build)"
    fi
    step "Slurm $series: cluster tests on a cluster of that Slurm"
    # shellcheck disable=SC2086 # word list on purpose
    IDLETIME_SLURM=$slurm PREFIX=/opt/idletime-$series IDLETIME_CI_DIR=/var/tmp/idletime-ci-slurm-$release \
        IDLETIME_CI_PORT_BASE=$port IDLETIME_BUILD_DIR=$build SHARDS=2 "$top/testsuite/cluster/run-suites.sh" $TESTS
    port=$((port + 3000))
    passed="$passed $series"
done
step "version matrix: passed:${passed:- none}${untested:+; NOT TESTED (no source):$untested}"
