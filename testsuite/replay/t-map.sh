#!/bin/sh
# idletime-replay map on the hand-written fixture: real files out, bad input -> exit 2, one line.
set -u
BIN=${BIN:-tools/replay/idletime-replay}
DATA=$(dirname "$0")/data
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$BIN" map --trace "$DATA/openb_small.csv" --out "$OUT/s" --window-start 0 --window-len 1000 \
	--compress 10 --sample 1 >"$OUT/log" 2>&1 || fail "map exited $?: $(cat "$OUT/log")"
[ "$(wc -l <"$OUT/s/jobs.csv")" -eq 5 ] || fail "jobs.csv should have a header and 4 jobs"
grep -q '^p-big,50.000,18.000,4,guaranteed,h100-t[01],h100,h100,1$' "$OUT/s/jobs.csv" || fail "p-big row wrong"
[ "$(awk -F, 'NR>1 && $2=="a100" {s+=$3} END {print s}' "$OUT/s/quotas.csv")" -eq 16 ] || fail "a100 quotas must sum to 16"
jq -e '.quotas | length == 4' "$OUT/s/idletime.json" >/dev/null || fail "idletime.json must hold 4 quotas"
grep -q 'spec not mapped' "$OUT/s/mapping.md" || fail "mapping.md lacks the pod table"

# Same seed, same stream; bad input: status 2 and one line naming the problem.
"$BIN" map --trace "$DATA/openb_small.csv" --out "$OUT/t" --window-start 0 --window-len 1000 \
	--compress 10 --sample 1 >/dev/null 2>&1 && cmp -s "$OUT/s/jobs.csv" "$OUT/t/jobs.csv" || fail "not deterministic"
check_bad() {
	want=$1; shift
	"$BIN" "$@" >"$OUT/out" 2>"$OUT/err"; rc=$?
	[ $rc -eq 2 ] || fail "'$*' exited $rc, want 2"
	[ "$(wc -l <"$OUT/err")" -eq 1 ] || fail "'$*' printed more than one line: $(cat "$OUT/err")"
	grep -qF -e "$want" "$OUT/err" || fail "'$*': got '$(cat "$OUT/err")', want '$want'"
	[ ! -e "$OUT/bad" ] || fail "'$*' wrote output"
}
check_bad "first argument must be 'map' or 'run'" replay
check_bad "--compress '0.5x' is not a non-negative number" map --trace x --out "$OUT/bad" --compress 0.5x
check_bad "--fractional 'half' unknown, allowed: round-up, skip" map --trace x --out "$OUT/bad" --fractional half
check_bad "column 'gpu_spec' missing" map --trace "$DATA/openb_nocol.csv" --out "$OUT/bad"
check_bad "qos 'XX' unknown" map --trace "$DATA/openb_badqos.csv" --out "$OUT/bad"
check_bad "compression factor must be >= 1" map --trace "$DATA/openb_small.csv" --out "$OUT/bad" --compress 0.5
check_bad "cannot read --trace" map --trace "$OUT/none.csv" --out "$OUT/bad"
check_bad "--kind 'philly' unknown, allowed: openb, sacct, swf" map --trace x --out "$OUT/bad" --kind philly
check_bad "column 'AllocTRES' or 'ReqTRES' missing" map --kind sacct --trace "$DATA/sacct_notres.txt" --out "$OUT/bad"
check_bad "--seed and --seeds exclude each other" map --trace x --out "$OUT/bad" --seed 1 --seeds 1,2
check_bad "--quota-percentile '0' must be in (0, 100]" map --trace x --out "$OUT/bad" --quota-percentile 0
check_bad "no job read as swf" map --kind swf --trace "$DATA/sacct_notres.txt" --out "$OUT/bad"
# The replay cluster's size: --pools NAME=GPUS and --max-gpus (GPUs per node) shape idletime.json.
"$BIN" map --trace "$DATA/openb_small.csv" --out "$OUT/p" --window-start 0 --window-len 1000 \
	--compress 10 --sample 1 --pools a100=256,h100=16 --max-gpus 8 >"$OUT/log" 2>&1 || fail "--pools map exited $?: $(cat "$OUT/log")"
jq -e '[.pools[] | [.name, .nodes, .node.gpus, .node.cpus]] == [["a100", "a100-[1-32]", 8, 16], ["h100", "h100-[1-2]", 8, 16]]' \
	"$OUT/p/idletime.json" >/dev/null || fail "--pools a100=256,h100=16 --max-gpus 8: $(jq -c .pools "$OUT/p/idletime.json")"
[ "$(awk -F, 'NR>1 && $2=="a100" {s+=$3} END {print s}' "$OUT/p/quotas.csv")" -eq 256 ] || fail "a100 quotas must sum to 256"
check_bad "pool 'a100' has 18 GPUs, not a whole number of 4-GPU nodes" map --trace "$DATA/openb_small.csv" --out "$OUT/bad" --pools a100=18
check_bad "the pools need 65 nodes; the local cluster holds at most 64" map --trace "$DATA/openb_small.csv" --out "$OUT/bad" --pools a100=512,h100=8 --max-gpus 8
check_bad "--max-gpus '9' must be GPUs per node, a whole number from 1 to 8" map --trace x --out "$OUT/bad" --max-gpus 9
check_bad "--pools item 'A100=8' must be NAME=GPUS" map --trace x --out "$OUT/bad" --pools A100=8
check_bad "--pools names pool 'a100' twice" map --trace x --out "$OUT/bad" --pools a100=8,a100=8
check_bad "--pools item 'a=2147483647': GPUS must be a whole number from 1 to 512" map --trace x --out "$OUT/bad" --max-gpus 1 --pools a=2147483647,b=2147483647
check_bad "--pools item 'a100=inf': GPUS must be a whole number from 1 to 512" map --trace x --out "$OUT/bad" --pools a100=inf
check_bad "--pools 'a100=8,' ends with a comma" map --trace x --out "$OUT/bad" --pools a100=8,
check_bad "--pools item '1a=8' must be NAME=GPUS, NAME a lower-case letter" map --trace x --out "$OUT/bad" --pools 1a=8
check_bad "--max-gpus '0' must be GPUs per node, a whole number from 1 to 8" map --trace x --out "$OUT/bad" --max-gpus 0
check_bad "--max-gpus 'nan' must be GPUs per node, a whole number from 1 to 8" map --trace x --out "$OUT/bad" --max-gpus nan

# sacct: quotas per account, scavenger QOS as idle-time, the 2-node job stays a gang; bad rows
# are reported by reason in mapping.md.
"$BIN" map --kind sacct --trace "$DATA/sacct_small.txt" --out "$OUT/sa" --compress 10 --idle-qos scavenger \
	>"$OUT/log" 2>&1 || fail "sacct map exited $?: $(cat "$OUT/log")"
grep -q '^101,6.000,360.000,8,idle,h100-chem,h100,h100,2$' "$OUT/sa/jobs.csv" || fail "sacct: job 101 row wrong: $(cat "$OUT/sa/jobs.csv")"
grep -q '7 bad rows\|, 7 bad\.' "$OUT/sa/mapping.md" || fail "sacct: mapping.md lacks the bad-row count"
grep -qF '| End before Start | 1 |' "$OUT/sa/mapping.md" || fail "sacct: no reason table"
grep -q '3 job steps skipped' "$OUT/sa/mapping.md" || fail "sacct: steps not counted"
grep -q '7 bad trace rows' "$OUT/log" || fail "sacct: stdout lacks the bad-row count: $(cat "$OUT/log")"
jq -e '[.quotas[].name] | index("a100-physics") != null' "$OUT/sa/idletime.json" >/dev/null || fail "sacct: no a100-physics quota"
# The site's own quotas (the repository's example config; its CPU-only quota is left out).
sed 's/"team-x"\]/"team-x", "chem"]/' "$(dirname "$0")/../../etc/idletime.json" >"$OUT/site.json"
"$BIN" map --kind sacct --trace "$DATA/sacct_small.txt" --out "$OUT/si" --site-config "$OUT/site.json" \
	>"$OUT/log" 2>&1 || fail "site map exited $?: $(cat "$OUT/log")"
[ "$(jq '.quotas | length' "$OUT/si/idletime.json")" -eq 5 ] || fail "site: want the 5 GPU quotas"
grep -q ',team-x,h100,h100,' "$OUT/si/jobs.csv" || fail "site: chem's jobs not in team-x: $(cat "$OUT/si/jobs.csv")"
check_bad "cannot read --site-config" map --kind sacct --trace "$DATA/sacct_small.txt" --out "$OUT/bad" --site-config "$OUT/none.json"
# Several seeds: one directory per seed.
"$BIN" map --kind swf --trace "$DATA/swf_small.swf" --out "$OUT/sw" --compress 2 --seeds 1,2 --procs-per-gpu 2 \
	>"$OUT/log" 2>&1 || fail "swf map exited $?: $(cat "$OUT/log")"
for s in 1 2; do [ -s "$OUT/sw/seed-$s/jobs.csv" ] || fail "swf: seed-$s/jobs.csv missing"; done
grep -q '^swf-4,[^,]*,[^,]*,8,.*,2$' "$OUT/sw/seed-1/jobs.csv" || fail "swf: 16 processors (8 GPUs) not a 2-node gang: $(cat "$OUT/sw/seed-1/jobs.csv")"
echo "PASS: idletime-replay map"
