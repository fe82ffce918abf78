#!/bin/bash
# GPU check at slurmd start (spank_idletime, NODE CHECK in spank_idletime(8)): a restarted slurmd
# logs what hwloc detected and every mismatch with the pool and the Gres, the same findings
# `idletime check --node` prints, keeps running, and under node_check.on_mismatch "log" no node
# is drained. On this emulated cluster (no real GPUs) every GPU node mismatches.
. "$(dirname "$0")/lib.sh"
it_begin
IT=${IDLETIME_BIN:-${PREFIX:-/usr/local}/bin/idletime}
SRC=$(cd "$IC_SRC/../.." && pwd)
CFG=${IDLETIME_TEST_CONFIG:-$SRC/etc/idletime.json}
[ -x "$IT" ] || it_fail "no idletime tool at $IT"
mode=$(jq -r '.node_check.on_mismatch // "log"' "$CFG")
it_assert_eq log "$mode" "node_check.on_mismatch of the cluster's config"
node=$(jq -r '[.pools[] | select(.node.gpus > 0)][0].nodes' "$CFG" | xargs scontrol show hostnames | head -n1)
[ -n "$node" ] || it_fail "no GPU pool in $CFG"
log=$(ic_logfile "slurmd-$node")
[ -f "$log" ] || it_fail "no slurmd log $log"

# The tool's view of the same node: the plugin must log the same detection and findings.
want=$("$IT" check --config="$CFG" --node="$node" 2>&1)
detected=$(sed -n "s/^node $node (pool \([^)]*\)): detected \(.*\)$/\1|\2/p" <<<"$want")
[ -n "$detected" ] || it_fail "idletime check --node=$node printed no detection: $want"
mapfile -t findings < <(sed -n 's/^mismatch: //p' <<<"$want")

from=$(($(wc -l <"$log") + 1))
out=$("$IC_SRC/restart-daemon.sh" --dir "$IC_DIR" "slurmd-$node" 2>&1) || it_fail "restart slurmd-$node: $out"
# The Gres line comes from a detached grandchild after slurmctld answers: wait for it too.
new() { tail -n +"$from" "$log"; }
verdict() { new | grep -qE "idletime/spank: node $node: (GPU mismatch: Gres:|GPUs agree|Gres not checked)"; }
ic_poll 30 verdict || it_fail "no Gres verdict in $log after the restart: $(new | grep idletime/spank)"
lines=$(new | grep 'idletime/spank: ')
it_info "slurmd-$node logged:"$'\n'"$lines"
grep -qF "idletime/spank: node $node (pool ${detected%%|*}): hwloc detected ${detected#*|} in " <<<"$lines" ||
	it_fail "no hwloc line matching the tool's \"${detected#*|}\": $lines"
for f in "${findings[@]}"; do
	grep -qF "error: idletime/spank: node $node: GPU mismatch: $f" <<<"$lines" || it_fail "finding \"$f\" not logged: $lines"
done
n=$(grep -c 'GPU mismatch: ' <<<"$lines")
it_assert_eq "${#findings[@]}" "$n" "mismatch lines logged vs findings of idletime check"
if [ ${#findings[@]} -gt 0 ]; then
	grep -qF "idletime/spank: node $node: not draining: node_check.on_mismatch is \"log\"" <<<"$lines" ||
		it_fail "no 'not draining' line: $lines"
fi
grep -q 'drained' <<<"$lines" && it_fail "drained under \"log\": $lines"

# slurmd kept running and registered; no node is drained by idletime.
ic_running "slurmd-$node" || it_fail "slurmd-$node is not running after the check"
st=$(sinfo -h -n "$node" -o %T)
[[ $st =~ ^(idle|mixed|allocated|planned)$ ]] || it_fail "$node is $st after the restart"
while read -r n st reason; do
	[[ $st == drain* || $reason == idletime:* ]] && it_fail "$n is $st ($reason) under on_mismatch \"log\""
done < <(sinfo -N -h -o '%N %T %E' | sort -u)
it_pass
