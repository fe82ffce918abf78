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
grep -q '^p-big,50.000,18.000,4,guaranteed,h100-t[01],h100,h100$' "$OUT/s/jobs.csv" || fail "p-big row wrong"
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
echo "PASS: idletime-replay map"
