#!/bin/bash
# idletime check on the real cluster: partitions, QOS GrpTRES, accounts and preemption settings
# agree with the config the cluster was rendered from; a QOS limit changed with sacctmgr is found
# with its fix; --node compares hwloc XML topologies with the pool and the node's Gres and
# --drain drains a mismatching node with both values in the reason.
. "$(dirname "$0")/lib.sh"
it_begin
IT=${IDLETIME_BIN:-${PREFIX:-/usr/local}/bin/idletime}
SRC=$(cd "$IC_SRC/../.." && pwd)
CFG=${IDLETIME_TEST_CONFIG:-$SRC/etc/idletime.json}
DATA=$SRC/testsuite/views/data
[ -x "$IT" ] || it_fail "no idletime tool at $IT"

out=$("$IT" check --config="$CFG" --json); rc=$?
jq -e . >/dev/null <<<"$out" || it_fail "check --json printed no JSON: $out"
core=$(jq -r '.findings[] | select(.object | test("^(partition |QOS |account |PreemptType|PreemptMode|JobRequeue|AccountingStorage)")) | .object' <<<"$out")
it_assert_eq "" "$core" "findings on partitions/QOS/accounts/preemption of a cluster rendered from the config"
[ "$(jq -r .ok <<<"$out")" = true ] && want=0 || want=1
it_assert_eq "$want" "$rc" "exit status matches ok"
it_info "plugin findings on this cluster: $(jq -r '[.findings[].object]|join(", ")' <<<"$out")"

# A changed QOS limit is a mismatch with the fix; restore it afterwards.
old=$(sacctmgr -n -P show qos where name=team-c format=GrpTRES)
sacctmgr -i modify qos where name=team-c set GrpTRES=gres/gpu=2 >/dev/null || it_fail "sacctmgr modify"
trap 'sacctmgr -i modify qos where name=team-c set GrpTRES=gres/gpu=-1,cpu=-1,mem=-1 >/dev/null; sacctmgr -i modify qos where name=team-c set GrpTRES="$old" >/dev/null; scontrol update nodename=a100-4 state=resume >/dev/null 2>&1; it_cleanup_jobs' EXIT
out=$("$IT" check --config="$CFG"); rc=$?
it_assert_eq 1 "$rc" "exit status with a wrong GrpTRES"
# The wanted limit as the renderer writes it into the sacctmgr script (the order sacctmgr shows).
want=$("$IT" render --section=sacctmgr "$CFG" | sed -n "s/^ *set_limit 'team-c' '\(.*\)'$/\1/p")
it_assert_eq "cpu=16,gres/gpu=8,mem=32000M" "$want" "rendered GrpTRES of team-c"
grep -qxF "mismatch: QOS team-c GrpTRES: cluster has cpu=16,mem=32000M,gres/gpu=2, config wants $want" <<<"$out" ||
	it_fail "no GrpTRES mismatch line: $out"
grep -qxF "    fix: sacctmgr -i modify qos team-c set GrpTRES=$want" <<<"$out" || it_fail "no fix line: $out"

# --node: topology files against pool a100-east / a100-west and the Gres slurmctld has.
"$IT" check --config="$CFG" --node=a100-1 --topology="$DATA/a100-node.xml" >/dev/null; it_assert_eq 0 $? "A100 node in an a100 pool"
out=$("$IT" check --config="$CFG" --node=a100-2 --topology="$DATA/mixed-node.xml"); rc=$?
it_assert_eq 1 "$rc" "mixed node in an a100 pool"
grep -q '^mismatch: GPU spec: detected 2 x a100 (NVIDIA A100-SXM4-80GB) \[10de:20b2\] + 2 x h100 (NVIDIA H100 80GB HBM3) \[10de:2330\], expected a100 on every GPU (pool a100-east)$' <<<"$out" ||
	it_fail "mixed node: $out"
"$IT" check --config="$CFG" --node=cpu-1 --topology="$DATA/none-node.xml" >/dev/null; it_assert_eq 0 $? "GPU-less node in the general pool"
out=$("$IT" check --config="$CFG" --node=a100-4 --topology="$DATA/h100-node.xml" --drain); rc=$?
it_assert_eq 1 "$rc" "H100 topology on an a100 node"
grep -q '^drained a100-4: idletime: GPU spec' <<<"$out" || it_fail "no drain line: $out"
st=$(sinfo -h -n a100-4 -o '%T'); reason=$(sinfo -h -n a100-4 -o '%E')
[[ $st == drain* ]] || it_fail "a100-4 is $st, not drained"
[[ $reason == "idletime: GPU spec 4 x h100"* ]] || it_fail "drain reason: $reason"
scontrol update nodename=a100-4 state=resume || it_fail "resume a100-4"
"$IT" check --config="$CFG" --node=a100-9 --topology="$DATA/a100-node.xml" >/dev/null 2>&1; it_assert_eq 2 $? "node in no pool"
it_pass
