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
check_bad "first argument must be 'map' or 'run' (e.g. idletime-replay map" --trace x --out "$OUT/bad"
check_bad "a sacct or SWF trace needs --kind sacct or swf" map --trace "$DATA/sacct_small.txt" --out "$OUT/bad"
check_bad "--compress '0.5x' is not a non-negative number" map --trace x --out "$OUT/bad" --compress 0.5x
check_bad "--fractional 'half' unknown, allowed: round-up, skip" map --trace x --out "$OUT/bad" --fractional half
check_bad "column 'gpu_spec' missing" map --trace "$DATA/openb_nocol.csv" --out "$OUT/bad"
check_bad "qos 'XX' unknown" map --trace "$DATA/openb_badqos.csv" --out "$OUT/bad"
check_bad "--compress '0.5' must be a compression factor, 1 to 1e+06" map --trace "$DATA/openb_small.csv" --out "$OUT/bad" --compress 0.5
check_bad "cannot read --trace" map --trace "$OUT/none.csv" --out "$OUT/bad"
check_bad "--trace '$DATA' is a directory, not a trace file" map --trace "$DATA" --out "$OUT/bad"
check_bad "--kind 'philly' unknown, allowed: openb, sacct, swf" map --trace x --out "$OUT/bad" --kind philly
check_bad "column 'AllocTRES' or 'ReqTRES' missing" map --kind sacct --trace "$DATA/sacct_notres.txt" --out "$OUT/bad"
check_bad "--seed and --seeds exclude each other" map --trace x --out "$OUT/bad" --seed 1 --seeds 1,2
check_bad "--quota-percentile '0' must be a percentile, more than 0 to 100" map --trace x --out "$OUT/bad" --quota-percentile 0
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
grep -q '^Trace second 0 is 2026-11-30T10:00:00 ' "$OUT/sa/mapping.md" || fail "sacct: mapping.md does not date trace second 0"
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
check_bad "--min-duration '1e9' must be replay seconds, 0 to 3600" map --trace x --out "$OUT/bad" --min-duration 1e9
check_bad "--window-len '1.5' must be trace seconds, a whole number from 1 to" map --trace x --out "$OUT/bad" --window-len 1.5
check_bad "--seeds item '18446744073709551616' must be a seed, a whole number from 0 to 4294967295" \
	map --trace x --out "$OUT/bad" --seeds 1,18446744073709551616
check_bad "--seeds '1,1' names seed 1 twice" map --trace x --out "$OUT/bad" --seeds 1,1
check_bad "--sample '0' must be the share of jobs kept, more than 0 to 1" map --trace x --out "$OUT/bad" --sample 0
check_bad "--teams '0' must be quotas per pool, a whole number from 1 to 64" map --trace x --out "$OUT/bad" --teams 0
check_bad "no job left after mapping with seed 1" map --trace "$DATA/openb_small.csv" --out "$OUT/bad" --window-start 100000 --window-len 10
check_bad "--idle-qos 'scavanger': no job of --trace" map --kind sacct --trace "$DATA/sacct_small.txt" --out "$OUT/bad" --idle-qos scavanger
printf 'x\n' >"$OUT/file"
check_bad "--out '$OUT/file': exists and is not a directory" map --kind swf --trace "$DATA/swf_small.swf" --out "$OUT/file" --procs-per-gpu 2
mkdir "$OUT/mine" && touch "$OUT/mine/notes.txt"
check_bad "--out '$OUT/mine': not empty and not written by idletime-replay" \
	map --kind swf --trace "$DATA/swf_small.swf" --out "$OUT/mine" --procs-per-gpu 2 --seeds 1,2
[ ! -e "$OUT/mine/seed-1" ] && [ -e "$OUT/mine/notes.txt" ] || fail "a refused --out was changed: $(ls "$OUT/mine")"
check_bad "--out '/proc/idletime-replay': cannot create it" map --kind swf --trace "$DATA/swf_small.swf" --out /proc/idletime-replay --procs-per-gpu 2
# The marker must be the replay's own regular file: a symbolic link, a hard link or a directory of
# that name leaves --out and the files around it untouched (helper-35: a symlinked marker
# truncated its target; a directory marker let the cleanup delete files, then failed).
mkdir "$OUT/lnk" "$OUT/hard" "$OUT/mdir" && echo DATA >"$OUT/precious.txt" && echo x >"$OUT/mdir/thesis.md"
ln -s ../precious.txt "$OUT/lnk/.idletime-replay" && ln "$OUT/precious.txt" "$OUT/hard/.idletime-replay"
mkdir "$OUT/mdir/.idletime-replay" "$OUT/mdir/A"
for d in lnk hard mdir; do
	check_bad "--out '$OUT/$d': its .idletime-replay is not a regular file" map --kind swf --trace "$DATA/swf_small.swf" --out "$OUT/$d" --procs-per-gpu 2
done
[ "$(cat "$OUT/precious.txt")" = DATA ] && [ -e "$OUT/mdir/thesis.md" ] && [ -d "$OUT/mdir/A" ] || fail "a refused marker changed files"
# Only the names the replay writes are replaced; an input among them is refused, never deleted.
"$BIN" map --kind swf --trace "$DATA/swf_small.swf" --out "$OUT/keep" --procs-per-gpu 2 >/dev/null 2>&1 || fail "map into keep"
echo mine >"$OUT/keep/my-notes.md" && echo mine >"$OUT/keep/plot.png" && cp "$DATA/swf_small.swf" "$OUT/keep/jobs.csv.swf"
"$BIN" map --kind swf --trace "$OUT/keep/jobs.csv.swf" --out "$OUT/keep" --procs-per-gpu 2 >"$OUT/log" 2>&1 || fail "map again into keep: $(cat "$OUT/log")"
[ -s "$OUT/keep/my-notes.md" ] && [ -s "$OUT/keep/plot.png" ] && [ -s "$OUT/keep/jobs.csv.swf" ] && [ -s "$OUT/keep/jobs.csv" ] ||
	fail "a rerun removed files it did not write: $(ls -A "$OUT/keep")"
cp "$DATA/openb_small.csv" "$OUT/keep/quotas.csv"
check_bad "it holds '$OUT/keep/quotas.csv', an input that this run would replace" map --trace "$OUT/keep/quotas.csv" --out "$OUT/keep" --window-start 0
cmp -s "$DATA/openb_small.csv" "$OUT/keep/quotas.csv" || fail "the refused input was changed"
# All or nothing: a seed's directory that cannot be written leaves --out as it was, exit 2.
"$BIN" map --kind swf --trace "$DATA/swf_small.swf" --out "$OUT/an" --procs-per-gpu 2 >/dev/null 2>&1 || fail "map into an"
rm "$OUT/an/jobs.csv" && mkdir "$OUT/an/jobs.csv" && echo keep >"$OUT/an/jobs.csv/x" && before=$(ls -AR "$OUT/an")
check_bad "--out '$OUT/an': it holds jobs.csv of another kind" map --kind swf --trace "$DATA/swf_small.swf" --out "$OUT/an" --procs-per-gpu 2
[ "$(ls -AR "$OUT/an")" = "$before" ] || fail "a refused --out was changed: $(ls -AR "$OUT/an")"
# Counts and times that do not fit are bad rows, not truncated to 32 bits.
{ cat "$DATA/sacct_small.txt"
  echo '903|eve|physics|gpu|normal|2026-11-30T10:00:00|2026-11-30T10:00:05|2026-11-30T10:10:05|gres/gpu=4294967297|gres/gpu=1|COMPLETED|1'
  echo '904|eve|physics|gpu|normal|2026-11-30T10:00:00|2026-11-30T10:00:05|2026-11-30T10:10:05|gres/gpu=1|gres/gpu=1|COMPLETED|4294967297'
  echo '905|eve|physics|gpu|normal|2026-11-30T10:-1:00|2026-11-30T10:00:05|2026-11-30T10:10:05|gres/gpu=1|gres/gpu=1|COMPLETED|1'
} >"$OUT/big.txt"
"$BIN" map --kind sacct --trace "$OUT/big.txt" --out "$OUT/bg" --compress 10 >"$OUT/log" 2>&1 || fail "big sacct map exited $?: $(cat "$OUT/log")"
grep -qF '| bad TRES | 2 |' "$OUT/bg/mapping.md" && grep -qF '| bad NNodes | 2 |' "$OUT/bg/mapping.md" && grep -qF '| bad time | 2 |' "$OUT/bg/mapping.md" ||
	fail "sacct: 2^32+1 GPUs or nodes, or minute -1, not bad rows: $(grep -F '| bad' "$OUT/bg/mapping.md")"
{ cat "$DATA/swf_small.swf"; echo '77 9000000000000000000 0 100 1 -1 -1 1 100 -1 1 1 1 -1 1 1 -1 -1'; } >"$OUT/far.swf"
"$BIN" map --kind swf --trace "$OUT/far.swf" --out "$OUT/fa" --procs-per-gpu 2 >"$OUT/log" 2>&1 || fail "far swf map exited $?: $(cat "$OUT/log")"
grep -qF '| time out of range | 1 |' "$OUT/fa/mapping.md" || fail "swf: a submit time of 9e18 s was not a bad row"
check_bad "--idle-qos, --idle-partition and --idle-share exclude each other" map --trace x --out "$OUT/bad" --idle-qos BE --idle-share 0.5
check_bad "--spec-map item 'G2=zzz': 'zzz' is not a pool of --pools" map --trace x --out "$OUT/bad" --spec-map G2=zzz
check_bad "--idle-share 'nan' must be a share of each account's jobs" map --trace x --out "$OUT/bad" --idle-share nan
check_bad "--idle-partition 'cpu': none of the" map --kind sacct --trace "$DATA/sacct_small.txt" --out "$OUT/bad" --idle-partition cpu
check_bad "--site-config '/dev/zero' is not a regular file of at most 1 MiB" map --trace "$DATA/openb_small.csv" --out "$OUT/bad" --site-config /dev/zero
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
# quotas.csv names its demand column for what it holds, whatever --quota-percentile is.
"$BIN" map --trace "$DATA/openb_small.csv" --out "$OUT/q50" --window-start 0 --window-len 1000 \
	--compress 10 --sample 1 --quota-percentile 50 >"$OUT/log" 2>&1 || fail "--quota-percentile 50 map exited $?: $(cat "$OUT/log")"
[ "$(head -1 "$OUT/q50/quotas.csv")" = quota,pool,gpus,demand_gpus ] || fail "quotas.csv header: $(head -1 "$OUT/q50/quotas.csv")"
# Standard output that cannot be written is an error, not exit 0.
"$BIN" map --trace "$DATA/openb_small.csv" --out "$OUT/full" --window-start 0 --window-len 1000 \
	--compress 10 --sample 1 >/dev/full 2>"$OUT/err"
rc=$?
[ $rc -eq 1 ] && grep -qF "cannot write standard output" "$OUT/err" || fail "map >/dev/full exited $rc: $(cat "$OUT/err")"
# A pipe whose reader is gone: the write fails (SIGPIPE caught), exit 1 with a message.
{ sleep 0.5; "$BIN" map --trace "$DATA/openb_small.csv" --out "$OUT/pipe" --window-start 0 --window-len 1000 \
	--compress 10 --sample 1 2>"$OUT/err"; echo $? >"$OUT/rc"; } | true
[ "$(cat "$OUT/rc")" = 1 ] && grep -qF "cannot write standard output" "$OUT/err" || fail "map into a closed pipe exited $(cat "$OUT/rc"): $(cat "$OUT/err")"
# Options with a control character are refused (they would reach messages, reports and Slurm).
check_bad "argument 3 'x\x1by' holds a control character" map --trace "$(printf 'x\033y')" --out "$OUT/bad"
# A control byte in a trace field reaches messages and mapping.md as \xNN, never raw.
{ head -n 2 "$DATA/sacct_small.txt"; printf '906|eve|physics|gpu|normal|2026-11-30T10:00:00\033]2;x\007|2026-11-30T10:00:05|2026-11-30T10:10:05|gres/gpu=1|gres/gpu=1|COMPLETED|1\n'; } >"$OUT/esc.txt"
"$BIN" map --kind sacct --trace "$OUT/esc.txt" --out "$OUT/es" --compress 10 >"$OUT/log" 2>&1 || fail "escape sacct map exited $?: $(cat "$OUT/log")"
grep -qF '\x1b]2;x\x07' "$OUT/es/mapping.md" || fail "mapping.md lacks the escaped field: $(grep -F '| bad' "$OUT/es/mapping.md")"
! grep -q "$(printf '\033')" "$OUT/es/mapping.md" "$OUT/log" || fail "a raw ESC reached mapping.md or the log"
{ head -n 1 "$DATA/openb_small.csv"; printf 'p-esc,1000,1024,1,1000,,LS\033[2J,Running,0,1000,0\n'; } >"$OUT/esc.csv"
check_bad '\x1b[2J' map --trace "$OUT/esc.csv" --out "$OUT/bad"
! grep -q "$(printf '\033')" "$OUT/err" || fail "a raw ESC reached stderr"
echo "PASS: idletime-replay map"
