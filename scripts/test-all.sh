#!/bin/sh
# The README's test command: installs what is needed, builds, runs the unit tests (plain and with
# AddressSanitizer/UBSan), installs, starts the local Slurm cluster and runs the cluster tests, then
# builds, lintian-checks, installs and purges the Debian packages; then the Slurm version matrix
# (24.11, 26.05: build, unit tests, version guard, the cluster tests of each plugin).
# Usage (root, Debian 12): scripts/test-all.sh     Exit 0 only when everything passed.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
T0=$(date +%s); TS=$T0
# Each stage line says how long the previous stage took and the total so far.
step() {
    now=$(date +%s)
    printf '\n==== idletime/test-all: %s (previous stage %ss, total %ss, %s) ====\n' "$*" $((now - TS)) $((now - T0)) "$(date -u +%H:%M:%S)"
    TS=$now
}
step "install Debian packages"
"$top/scripts/install-deps.sh"
step "build"
"$top/scripts/build.sh" "$top/_build"
step "unit tests"
# Unit tests leave nothing in /tmp (each program removes its scratch root, pass or fail): checked
# after the sanitizer run against this stamp.
unit_stamp=$(mktemp /tmp/test-all-unit-stamp.XXXXXX)
# Test programs are compiled with -j2 first (TESTS= runs none), then the tests run one at a time.
make -C "$top/_build" -j2 check TESTS= >/dev/null
make -C "$top/_build" check || { find "$top/_build" -name '*.log' -newer "$top/_build/Makefile" \
    -exec grep -l -E '^(FAIL|ERROR)' {} + | xargs -r tail -n 30; exit 1; }
step "unit tests with AddressSanitizer and UBSan"
"$top/scripts/build.sh" "$top/_build-asan" --enable-sanitizers CFLAGS="-g -O0" CXXFLAGS="-g -O0"
make -C "$top/_build-asan" -j2 check TESTS= >/dev/null
ASAN_OPTIONS=detect_leaks=1 make -C "$top/_build-asan" check
leaked=$(find /tmp -maxdepth 1 -name 'idletime-*' -newer "$unit_stamp" | head -n 5)
rm -f "$unit_stamp"
[ -z "$leaked" ] || { echo "test-all: the unit tests left these in /tmp (and maybe more): $leaked" >&2; exit 1; }
step "install"
make -C "$top/_build" install >/dev/null
ldconfig
make -C "$top/_build" installcheck  # README's `from idletime import ...` in a fresh shell
step "cluster tests (real slurmctld, slurmd, slurmdbd; independent clusters in parallel)"
# t-sched-safety loads deliberately mismatched plugins that make check built in _build.
# t-sched-victims with checkpoint ages 20/3/10 s (each must stay within the 60 s that
# job_submit/idletime accepts for a freshly written claim).
IDLETIME_BUILD_DIR="$top/_build" SCHED_T_AGES=${SCHED_T_AGES:-20 3 10} \
    "$top/testsuite/cluster/run-suites.sh"
step "packages: build the .debs (no make check: the stages above ran it), lintian, install, cluster tests on them, purge"
# dpkg-buildpackage -b in _build-deb with -j2; lintian fails on errors and warnings (each accepted
# one is in debian/*.lintian-overrides with its reason); install/purge runs in a private mount
# namespace (scripts/test-debs.sh), so the /usr/local install above is left as it is.
DEB_BUILD_OPTIONS="nocheck parallel=2" "$top/scripts/build-debs.sh" "$top/_debs" >"$top/_debs.list"
cat "$top/_debs.list"
# shellcheck disable=SC2046 # one .deb path a line, no spaces
lintian --fail-on error,warning $(cat "$top/_debs.list")
# While installed, a local cluster that uses only the packages' files (plugins, ft-hook, tools, the
# Python package and libidletime-ckpt) runs these cluster tests.
# shellcheck disable=SC2046
IDLETIME_DEB_CLUSTER_TESTS=${IDLETIME_DEB_CLUSTER_TESTS:-t-readme-sbatch t-exporter t-ckpt-notice t-ft-preempt} \
    "$top/scripts/test-debs.sh" $(cat "$top/_debs.list")
step "Slurm version matrix: 24.11 and 26.05 (Slurm built once from source, idletime -Werror, unit tests, version guard, cluster tests)"
# The full suite above ran on Debian 12's Slurm 22.05; this builds and tests against the newer
# generations sites run (scripts/test-matrix.sh prints its own stage times).
"$top/scripts/test-matrix.sh" ${IDLETIME_MATRIX:-24.11 26.05}
step "all tests passed"
