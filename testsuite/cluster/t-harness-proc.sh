#!/bin/bash
# stop.sh (root) finds the slurmstepd processes of its cluster with ic_stepd_pids: processes named
# slurmstepd, run by root, whose environment holds SLURM_CONF=<this cluster's slurm.conf>. The
# entry test read /proc/PID/environ through `tr | grep -q` under pipefail: grep -q quits at the
# first match, tr then dies of SIGPIPE when it still has output, and the pipeline read as no
# match (7 of 20 found, with the entry first in a 100 KB environment). Checked here with
# stand-ins (copies of sleep named slurmstepd) and a slurm.conf path of the test's own, so no
# process of the cluster is listed:
# - 8 of root with SLURM_CONF first in a 100 KB environment: all listed;
# - one of nobody with the same SLURM_CONF, one of root with another cluster's: not listed.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
set -o pipefail # as stop.sh runs it
[ -d "$IC_DIR" ] || it_fail "no cluster state dir $IC_DIR"
T=$(mktemp -d "$IC_DIR/t-harness-proc.XXXXXX") || it_fail "mktemp under $IC_DIR"
chmod 711 "$T" # nobody's stand-in is executed from it
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do named "$p" && kill "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
install -m 755 "$(command -v sleep)" "$T/slurmstepd"
IC_CONF=$T/etc/slurm.conf
big=$(head -c 100000 /dev/zero | tr '\0' x)
want=()
for _ in 1 2 3 4 5 6 7 8; do
	env -i SLURM_CONF="$IC_CONF" BIG="$big" "$T/slurmstepd" 60 &
	pids+=($!) want+=($!)
done
env -i SLURM_CONF="$IC_CONF" setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$T/slurmstepd" 60 &
pids+=($!)
other=$!
env -i SLURM_CONF="$T/other/slurm.conf" BIG="$big" "$T/slurmstepd" 60 &
pids+=($!)
named() { [ "$(cat "/proc/$1/comm" 2>/dev/null)" = slurmstepd ]; }
for p in "${pids[@]}"; do ic_poll 5 named "$p" || it_fail "stand-in $p did not start"; done
got=$(ic_stepd_pids | sort -n | tr '\n' ' ')
exp=$(printf '%s\n' "${want[@]}" | sort -n | tr '\n' ' ')
[ "$got" = "$exp" ] || it_fail "ic_stepd_pids listed '$got', expected the 8 root stand-ins '$exp' (not nobody's $other nor the other cluster's ${pids[-1]})"
it_info "8 of 8 root stand-ins with a 100 KB environment listed; nobody's and another cluster's left out"
it_pass
