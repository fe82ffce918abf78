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
	timeout 60 "$BIN" "$@" >"$OUT/out" 2>"$OUT/err"; rc=$?
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
check_bad "--compress '0.5' must be a compression factor, 1 to 1e+06" map --trace "$DATA/openb_small.csv" --out "$OUT/bad" --compress 0.5
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

# Hostile input: endless or binary traces end with one line, absurd numbers are refused, nothing
# is written when any seed (or the --out directory) is unusable.
check_bad "line longer than 64 KiB: not a text trace" map --kind sacct --trace /dev/zero --out "$OUT/bad"
check_bad "line longer than 64 KiB: not a text trace" map --kind swf --trace /dev/zero --out "$OUT/bad"
check_bad "--compress 'inf' must be a compression factor, 1 to 1e+06" map --trace x --out "$OUT/bad" --compress inf
check_bad "--min-duration '1e9' must be trace seconds, 0 to 604800" map --trace x --out "$OUT/bad" --min-duration 1e9
check_bad "--window-len '1.5' must be trace seconds, a whole number from 1 to" map --trace x --out "$OUT/bad" --window-len 1.5
check_bad "--seeds item '18446744073709551616' must be a seed, a whole number from 0 to 4294967295" \
	map --trace x --out "$OUT/bad" --seeds 1,18446744073709551616
check_bad "--seeds '1,1' names seed 1 twice" map --trace x --out "$OUT/bad" --seeds 1,1
check_bad "--sample '0' must be the share of jobs kept, more than 0 to 1" map --trace x --out "$OUT/bad" --sample 0
check_bad "--teams '0' must be quotas per pool, a whole number from 1 to 64" map --trace x --out "$OUT/bad" --teams 0
check_bad "no job left after mapping with seed 1" map --trace "$DATA/openb_small.csv" --out "$OUT/bad" --window-start 100000 --window-len 10
check_bad "--idle-qos 'scavanger': no job of --trace" map --kind sacct --trace "$DATA/sacct_small.txt" --out "$OUT/bad" --idle-qos scavanger
printf 'x\n' >"$OUT/file"
check_bad "--out '$OUT/file' exists and is not a directory" map --kind swf --trace "$DATA/swf_small.swf" --out "$OUT/file" --procs-per-gpu 2
mkdir "$OUT/mine" && touch "$OUT/mine/notes.txt"
check_bad "--out '$OUT/mine' is not empty and was not written by idletime-replay" \
	map --kind swf --trace "$DATA/swf_small.swf" --out "$OUT/mine" --procs-per-gpu 2 --seeds 1,2
[ ! -e "$OUT/mine/seed-1" ] && [ -e "$OUT/mine/notes.txt" ] || fail "a refused --out was changed: $(ls "$OUT/mine")"
check_bad "--out '/proc/idletime-replay': cannot create it" map --kind swf --trace "$DATA/swf_small.swf" --out /proc/idletime-replay --procs-per-gpu 2
# An earlier replay's --out is reused: its seed directories do not outlive it.
"$BIN" map --kind swf --trace "$DATA/swf_small.swf" --out "$OUT/sw" --compress 2 --procs-per-gpu 2 >"$OUT/log" 2>&1 ||
	fail "swf map into an earlier replay's --out exited $?: $(cat "$OUT/log")"
[ -s "$OUT/sw/jobs.csv" ] && [ ! -e "$OUT/sw/seed-2" ] || fail "reused --out: $(ls "$OUT/sw")"
# Corrupt records: a UTF-8 byte order mark is read past; impossible dates and repeated SWF job
# numbers are bad rows counted by reason; a repeated or time-travelling openb pod stops the read.
{ printf '\357\273\277'; cat "$DATA/sacct_small.txt"
  echo '900|eve|physics|gpu|normal|2026-02-30T10:00:00|2026-03-01T10:00:05|2026-03-01T10:10:05|gres/gpu=1|gres/gpu=1|COMPLETED|1'
  echo '901|eve|physics|gpu|normal|9999-11-30T10:00:00|9999-11-30T10:00:05|9999-11-30T10:10:05|gres/gpu=1|gres/gpu=1|COMPLETED|1'
  echo '902|eve|physics|gpu|normal|1970-01-01T00:00:00|1970-01-01T00:00:05|1970-01-01T00:10:05|gres/gpu=1|gres/gpu=1|COMPLETED|1'
} >"$OUT/bom.txt"
"$BIN" map --kind sacct --trace "$OUT/bom.txt" --out "$OUT/bo" --compress 10 >"$OUT/log" 2>&1 || fail "BOM sacct map exited $?: $(cat "$OUT/log")"
grep -q '^101,6.000,360.000,8,' "$OUT/bo/jobs.csv" || fail "BOM sacct: job 101 moved or lost: $(head -3 "$OUT/bo/jobs.csv")"
grep -qF '| bad time | 4 |' "$OUT/bo/mapping.md" || fail "BOM sacct: Feb 30, 9999 and 1970 not bad times: $(grep -F '| bad time' "$OUT/bo/mapping.md")"
{ cat "$DATA/swf_small.swf"; grep -v '^;' "$DATA/swf_small.swf" | head -1; } >"$OUT/dup.swf"
"$BIN" map --kind swf --trace "$OUT/dup.swf" --out "$OUT/du" --procs-per-gpu 2 >"$OUT/log" 2>&1 || fail "dup swf map exited $?: $(cat "$OUT/log")"
grep -qF '| duplicate job number | 1 |' "$OUT/du/mapping.md" || fail "swf: a repeated job number was not counted: $(grep -F '|' "$OUT/du/mapping.md" | head)"
{ cat "$DATA/openb_small.csv"; sed -n 2p "$DATA/openb_small.csv"; } >"$OUT/dup.csv"
check_bad "pod 'p-ls-a' is also on line 2" map --trace "$OUT/dup.csv" --out "$OUT/bad"
{ cat "$DATA/openb_small.csv"; echo 'p-late,1000,1024,1,1000,,LS,Running,500,400,500'; } >"$OUT/late.csv"
check_bad "deletion_time 400 is before creation_time or scheduled_time" map --trace "$OUT/late.csv" --out "$OUT/bad"
echo "PASS: idletime-replay map"
