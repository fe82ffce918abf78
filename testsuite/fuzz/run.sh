#!/bin/sh
# Runs the config fuzzer for SECONDS (default 30) from a seed corpus of the repo's configs.
# Usage: run.sh FUZZER_BINARY [SECONDS]. Fails on any crash, leak, timeout or sanitizer report.
set -eu
bin=$1
secs=${2:-30}
top=${top_srcdir:-$(dirname "$0")/../..}
work=$(mktemp -d "${TMPDIR:-/tmp}/idletime-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus"
cp "$top"/etc/*.json "$work/corpus/"
cp "$top"/testsuite/fuzz/seeds/* "$work/corpus/" 2>/dev/null || true
echo "idletime/fuzz: $bin for ${secs}s"
"$bin" -max_total_time="$secs" -timeout=5 -rss_limit_mb=1024 -max_len=8192 \
    -dict="$top/testsuite/fuzz/config.dict" -artifact_prefix="$work/" "$work/corpus" >"$work/log" 2>&1 || {
    tail -40 "$work/log"
    for a in "$work"/crash-* "$work"/leak-* "$work"/timeout-*; do
        [ -e "$a" ] && cp "$a" . && echo "idletime/fuzz: artifact saved as ./$(basename "$a")"
    done
    exit 1
}
grep -E '^#[0-9]+ *DONE' "$work/log" || tail -3 "$work/log"
