#!/bin/bash
# idletime-exporter on the real cluster: a job In Quota, one Not in Quota, one pending; the
# /metrics scrape passes `promtool check metrics`, and every quota, pool and tenant number equals
# what `idletime quota --json` shows at the same moment; idle-time jobs running and pending;
# HTTP behaviour (404, 405, HEAD), concurrent clients sharing one job load, and bad options;
# SIGTERM stops it with exit 0.
# Env: IDLETIME_BIN (default /usr/local/bin/idletime), IDLETIME_EXPORTER (default the sbin next
# to it), PROMTOOL (default promtool, Debian package prometheus).
. "$(dirname "$0")/lib.sh"
it_begin
IT=${IDLETIME_BIN:-${PREFIX:-/usr/local}/bin/idletime}
EXP=${IDLETIME_EXPORTER:-$(dirname "$(dirname "$IT")")/sbin/idletime-exporter}
PROMTOOL=${PROMTOOL:-promtool}
CFG=${IDLETIME_TEST_CONFIG:-$(cd "$IC_SRC/../.." && pwd)/etc/idletime.json}
[ -x "$EXP" ] || it_fail "no idletime-exporter at $EXP"
command -v "$PROMTOOL" >/dev/null || it_fail "no promtool (Debian package prometheus; scripts/install-deps.sh)"

# Bad input: one line, exit 2, nothing served.
out=$("$EXP" --config="$CFG" --listen=bogus:port 2>&1); rc=$?
it_assert_eq 2 "$rc" "exit status of --listen=bogus:port"
[[ $out == *"--listen=bogus:port: not an address (allowed:"* ]] || it_fail "--listen error: $out"
"$EXP" --config=/nonexistent/idletime.json --once >/dev/null 2>&1; it_assert_eq 2 $? "exit status of a missing config"
"$EXP" --bogus >/dev/null 2>&1; it_assert_eq 2 $? "exit status of an unknown option"

a=$(it_submit alice -J exp-inq -p quota-team-a --gres=gpu:1 -n1 "$IT_JOBS_DIR/sleep.sh" 300) || it_fail "sbatch alice"
c=$(it_submit carol -J exp-nq -p idle-a100-west,idle-a100-east -w a100-1 --gres=gpu:2 -n2 "$IT_JOBS_DIR/sleep.sh" 300) ||
	it_fail "sbatch carol"
it_wait_state "$a" RUNNING 60 || it_fail "alice's job $a never ran"
it_wait_state "$c" RUNNING 60 || it_fail "carol's job $c never ran"
p=$(it_submit alice -J exp-pend -p quota-team-a --gres=gpu:4 -n1 "$IT_JOBS_DIR/sleep.sh" 300) || it_fail "sbatch pend"
it_wait_reason "$p" 'QOSGrpGRES|Resources|Priority' 30 || it_fail "job $p did not pend"

# Without --listen it serves this host only (127.0.0.1:9863): every tenant's numbers, read past
# PrivateData, are not offered to the network unless the site says so (security.md R12).
dlog=$IC_DIR/exporter-default.log
if ! ss -Htln 'sport = :9863' | grep -q .; then
	"$EXP" --config="$CFG" 2>"$dlog" &
	dpid=$!
	ic_poll 10 grep -q 'serving /metrics' "$dlog" || { kill "$dpid"; it_fail "default exporter did not start: $(cat "$dlog")"; }
	socks=$(ss -Htln 'sport = :9863' | awk '{print $4}')
	kill -TERM "$dpid"; wait "$dpid"
	it_assert_eq "127.0.0.1:9863" "$socks" "listening sockets of the exporter without --listen"
	# The shipped Prometheus example is a valid config that scrapes exactly that socket.
	ex=$(dirname "$(dirname "$IT")")/share/idletime/prometheus-idletime.yml
	"$PROMTOOL" check config "$ex" >/dev/null 2>&1 || it_fail "promtool check config $ex: $("$PROMTOOL" check config "$ex" 2>&1 | tail -n 2)"
	grep -qF -e '- targets: ["127.0.0.1:9863"]' "$ex" || it_fail "$ex does not scrape 127.0.0.1:9863"
else
	it_fail "port 9863 is taken on this machine: $(ss -Htlnp 'sport = :9863')"
fi

# A bare --listen=PORT changes the port only: still 127.0.0.1 (before, it listened on every address).
bport=$((IC_PORT_BASE + 50))
"$EXP" --config="$CFG" --listen="$bport" 2>"$dlog.bare" &
dpid=$!
ic_poll 10 grep -q 'serving /metrics' "$dlog.bare" || { kill "$dpid"; it_fail "exporter --listen=$bport did not start: $(cat "$dlog.bare")"; }
socks=$(ss -Htln "sport = :$bport" | awk '{print $4}')
kill -TERM "$dpid"; wait "$dpid"
it_assert_eq "127.0.0.1:$bport" "$socks" "listening sockets of the exporter with --listen=$bport"

log=$IC_DIR/exporter-test.log
"$EXP" --config="$CFG" --listen=127.0.0.1:0 2>"$log" &
epid=$!
trap 'kill "$epid" 2>/dev/null' EXIT
ic_poll 10 grep -q 'serving /metrics' "$log" || it_fail "exporter did not start: $(cat "$log")"
port=$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$log")
url=http://127.0.0.1:$port

quota_json() { "$IT" quota --config="$CFG" --json | jq -c 'del(.generated_at)'; }
# The same moment: a scrape between two equal quota views (retried when a job changed state).
for try in 1 2 3 4 5; do
	q1=$(quota_json) || it_fail "idletime quota --json failed"
	m=$(curl -sf "$url/metrics") || it_fail "GET /metrics failed"
	q2=$(quota_json)
	[ "$q1" = "$q2" ] && break
	[ "$try" = 5 ] && it_fail "idletime quota kept changing"
done
lint=$("$PROMTOOL" check metrics <<<"$m" 2>&1) || it_fail "promtool check metrics: $lint"
it_info "promtool check metrics: ok ($(grep -vc '^#' <<<"$m") samples)"

# Every number of the quota view as the series the exporter must serve, line for line.
expected=$(jq -r '
  (.quotas[] | . as $q | (["guaranteed","used","lent","own_idle","borrowed","pending"][] as $f |
     (["gpus","cpus"][] as $r |
      "idletime_quota_\($f)_\($r){tenant=\"\($q.tenant)\",pool=\"\($q.pool)\",quota=\"\($q.name)\"} \($q[$f][$r])")),
   (["running_jobs:guaranteed_running_jobs","idle_jobs:idle_running_jobs","pending_jobs:pending_jobs"][] |
     split(":") as $p |
     "idletime_quota_\($p[1]){tenant=\"\($q.tenant)\",pool=\"\($q.pool)\",quota=\"\($q.name)\"} \($q[$p[0]])")),
  (.pools[] | . as $p | (["capacity","guaranteed","used","idle_used","unassigned","own_idle","lent","borrowed","pending"][] as $f |
     "idletime_pool_\($f)_gpus{tenant=\"\($p.tenant)\",pool=\"\($p.name)\"} \($p[$f].gpus)")),
  (.tenants[] | . as $t | (["capacity","guaranteed","used","idle_used","lent","borrowed","pending"][] as $f |
     "idletime_tenant_\($f)_gpus{tenant=\"\($t.name)\"} \($t[$f].gpus)"))' <<<"$q1") || it_fail "jq"
n=0
while IFS= read -r line; do
	grep -Fxq -- "$line" <<<"$m" || it_fail "scrape lacks '$line' (idletime quota --json has it); scrape: $(grep -F "${line%% *}" <<<"$m" | head -3)"
	n=$((n + 1))
done <<<"$expected"
[ "$n" -ge 100 ] || it_fail "only $n expected series from idletime quota --json"
it_info "$n series equal idletime quota --json"
# What this test runs, directly: carol's 2 GPUs borrowed, alice's 4-GPU job pending.
grep -Fxq 'idletime_quota_borrowed_gpus{tenant="acme",pool="a100-west",quota="team-c"} 2' <<<"$m" ||
	it_fail "team-c borrowed 2: $(grep 'borrowed_gpus.*team-c' <<<"$m")"
grep -Fxq 'idletime_idle_jobs{quota="team-c",state="running"} 1' <<<"$m" || it_fail "team-c idle-time job running"
grep -Eq '^idletime_quota_pending_jobs\{tenant="acme",pool="a100-east",quota="team-a"\} [1-9]' <<<"$m" ||
	it_fail "team-a pending job"
grep -Fxq 'idletime_up 1' <<<"$m" || it_fail "idletime_up 1"
# No per-job labels.
! grep -Eq 'job_?id=|user=|node=' <<<"$m" || it_fail "a per-job label: $(grep -E 'job_?id=|user=|node=' <<<"$m" | head -1)"
bad=$(grep -v '^#' <<<"$m" | grep -v '^idletime_' | head -1)
[ -z "$bad" ] || it_fail "a series outside the idletime_ prefix: $bad"

# The Grafana dashboard asks only for series this scrape serves (histograms: their _bucket,
# _sum, _count samples), and every panel has a query.
DASH=$(cd "$IC_SRC/../.." && pwd)/etc/grafana/idletime-dashboard.json
jq -e '[.panels[] | select((.targets // []) | length == 0)] | length == 0' "$DASH" >/dev/null ||
	it_fail "a dashboard panel without a query"
# Served = every family the scrape declares (a family may have no sample at this moment, e.g.
# preemptions on a cluster that had none), histograms with their sample suffixes.
served=$(awk '$1 == "#" && $2 == "TYPE" { print $3; if ($4 == "histogram") print $3 "_bucket\n" $3 "_sum\n" $3 "_count" }' <<<"$m" | sort -u)
used=$(jq -r '[.. | objects | (.expr?, .definition?) | strings] | .[]' "$DASH" | grep -oE 'idletime_[a-z0-9_]+' | sort -u)
[ "$(wc -l <<<"$used")" -ge 10 ] || it_fail "dashboard uses only: $used"
for n in $used; do
	grep -Fxq "$n" <<<"$served" || it_fail "dashboard queries $n, which the exporter does not serve"
done
# A series filtered by quota=~"$quota" has the quota label.
for n in $(jq -r '[.. | objects | .expr? | strings] | .[]' "$DASH" | grep -oE 'idletime_[a-z0-9_]+\{quota=~' | sed 's/{.*//' | sort -u); do
	grep -q "^${n}[{ ]" <<<"$m" || continue  # no sample now (nothing recorded yet): nothing to look at
	grep -q "^$n{.*quota=\"" <<<"$m" || it_fail "dashboard filters $n by quota, which it has no label for"
done
it_info "dashboard: $(wc -l <<<"$used") series names, all served"

# HTTP: unknown path, method, HEAD.
it_assert_eq 404 "$(curl -s -o /dev/null -w '%{http_code}' "$url/nope")" "GET /nope"
it_assert_eq 405 "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$url/metrics")" "POST /metrics"
it_assert_eq 200 "$(curl -s -o /dev/null -I -w '%{http_code}' "$url/metrics")" "HEAD /metrics"
ct=$(curl -s -o /dev/null -w '%{content_type}' "$url/metrics")
it_assert_eq "text/plain; version=0.0.4; charset=utf-8" "$ct" "Content-Type"
# A client that trickles its request head a byte every 0.5 s is cut off with 400 once the 5 s head
# deadline has passed (before it finished sending), and the next scraper is served (security.md R11).
slow=$(/usr/bin/python3 - "$port" <<'PY'
import select, socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
req = b"GET /metrics HTTP/1.1\r\nX-Slow: " + b"a" * 20
sent, resp = 0, b""
for b in req:
    if select.select([s], [], [], 0.5)[0]:
        resp = s.recv(100)
        break
    s.send(bytes([b]))
    sent += 1
print(sent, len(req), resp.split(b"\r\n")[0].decode(errors="replace"))
PY
) || it_fail "slow client: $slow"
read -r sent total status <<<"$slow"
[[ $status == "HTTP/1.1 400 Bad Request" && $sent -lt $total ]] ||
	it_fail "a request head trickled in over $((total / 2)) s was not cut off: sent $sent of $total bytes, answer '$status'"
it_info "slow client cut off after $sent of $total bytes: $status"
it_assert_eq 200 "$(curl -s -o /dev/null -w '%{http_code}' "$url/metrics")" "GET /metrics after a slow client"
# Connections are served concurrently (security.md E3): while a client trickles its request head,
# another scraper is answered before that client is cut off (one at a time, it waited for the 5 s
# head deadline); 20 scrapers at once all get 200 and share job loads: slurmctld counts fewer
# than 20 REQUEST_JOB_INFO for them.
conc=$(/usr/bin/python3 - "$port" <<'PY'
import select, socket, sys
port = int(sys.argv[1])
slow = socket.create_connection(("127.0.0.1", port))
slow.send(b"GET /metrics HTTP/1.1\r\nX-Slow: a")
fast = socket.create_connection(("127.0.0.1", port))
fast.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
resp = b""
while True:
    b = fast.recv(65536)
    if not b:
        break
    resp += b
first = "slow-still-waiting" if not select.select([slow], [], [], 0)[0] else "slow-answered-first"
print(resp.split(b"\r\n")[0].decode(errors="replace").replace(" ", "_"), first)
PY
) || it_fail "concurrent clients: $conc"
it_assert_eq "HTTP/1.1_200_OK slow-still-waiting" "$conc" "a scrape while another client trickles its request"
jobinfo() { sdiag | awk '/^[ \t]*REQUEST_JOB_INFO[ \t(]/ { if (match($0, /count:[0-9]+/)) print substr($0, RSTART + 6, RLENGTH - 6); exit }'; }
j0=$(jobinfo)
[ -n "$j0" ] || it_fail "sdiag shows no REQUEST_JOB_INFO count: $(sdiag | grep -m1 REQUEST_JOB_INFO)"
many=$(/usr/bin/python3 - "$port" <<'PY'
import socket, sys
port = int(sys.argv[1])
socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(20)]
for s in socks:
    s.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
ok = 0
for s in socks:
    resp = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        resp += b
    ok += resp.startswith(b"HTTP/1.1 200 OK") and b"idletime_up 1" in resp
print(ok)
PY
) || it_fail "20 concurrent scrapes: $many"
j1=$(jobinfo)
it_assert_eq 20 "$many" "scrapes of 20 concurrent clients answered 200 with idletime_up 1"
# 16 clients that send nothing hold every connection thread: a scraper then waits (at most the 5 s
# head deadline) and is answered 200, never turned away with 503 (review helper-29).
held=$(/usr/bin/python3 - "$port" <<'PY'
import socket, sys, time
port = int(sys.argv[1])
silent = [socket.create_connection(("127.0.0.1", port)) for _ in range(16)]
time.sleep(0.5)
s = socket.create_connection(("127.0.0.1", port))
s.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
resp = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    resp += b
print(resp.split(b"\r\n")[0].decode(errors="replace").replace(" ", "_"))
PY
) || it_fail "scrape behind 16 silent clients: $held"
it_assert_eq "HTTP/1.1_200_OK" "$held" "a scrape while 16 silent clients hold every connection thread"
[ $((j1 - j0)) -lt 20 ] || it_fail "20 concurrent scrapes made $((j1 - j0)) job loads (REQUEST_JOB_INFO), expected them shared"
it_info "20 concurrent scrapes: $((j1 - j0)) job loads in slurmctld"
# --once prints the same families.
it_assert_eq "$(grep -c '^# TYPE' <<<"$m")" "$("$EXP" --config="$CFG" --once | grep -c '^# TYPE')" "--once families"
# --textfile: no listener; the file is replaced atomically, a symlink at its path is replaced and
# not followed, a name node_exporter would not read is refused, a missing directory is one line.
tdir=$IC_DIR/textfile
rm -rf "$tdir"; mkdir -p "$tdir"
echo keep >"$tdir/target"
ln -s "$tdir/target" "$tdir/idletime.prom"
terr=$("$EXP" --config="$CFG" --textfile="$tdir/idletime.prom" 2>&1) || it_fail "--textfile failed: $terr"
[ -f "$tdir/idletime.prom" ] && [ ! -L "$tdir/idletime.prom" ] || it_fail "--textfile left $(ls -l "$tdir/idletime.prom")"
it_assert_eq keep "$(cat "$tdir/target")" "the symlink's target after --textfile"
it_assert_eq 644 "$(stat -c %a "$tdir/idletime.prom")" "mode of the textfile"
"$PROMTOOL" check metrics <"$tdir/idletime.prom" >/dev/null 2>&1 || it_fail "promtool check metrics on the textfile failed"
it_assert_eq "$(grep -c '^# TYPE' <<<"$m")" "$(grep -c '^# TYPE' "$tdir/idletime.prom")" "--textfile families"
it_assert_eq "idletime.prom target" "$(ls -A "$tdir" | tr '\n' ' ' | sed 's/ $//')" "files in the textfile directory (no temporary left)"
terr=$("$EXP" --config="$CFG" --textfile="$tdir/idletime.txt" 2>&1); rc=$?
it_assert_eq 2 "$rc" "exit status of --textfile=*.txt"
[[ $terr == *"the file name must end in .prom"* ]] || it_fail "--textfile=*.txt said: $terr"
terr=$("$EXP" --config="$CFG" --listen=9999 --textfile="$tdir/idletime.prom" 2>&1); rc=$?
it_assert_eq 2 "$rc" "exit status of --textfile with --listen"
[[ $terr == *"--textfile writes a file and listens nowhere: drop --listen"* ]] || it_fail "--textfile with --listen said: $terr"
terr=$("$EXP" --config="$CFG" --textfile="$tdir/none/idletime.prom" 2>&1); rc=$?
it_assert_eq 1 "$rc" "exit status of --textfile into a missing directory"
[[ $terr == *"cannot create a temporary file in $tdir/none: No such file or directory"* ]] || it_fail "--textfile into a missing directory said: $terr"

# Without PrivateData=jobs an ordinary user sees every job: no warning (t-private-data-exporter: with it).
werr=$(cd / && runuser -u carol -- "$EXP" --config="$CFG" --once 2>&1 >/dev/null) || it_fail "--once as carol failed: $werr"
[ -z "$werr" ] || it_fail "carol was warned on a cluster without PrivateData: $werr"

kill -TERM "$epid"
wait "$epid"; rc=$?
trap - EXIT
it_assert_eq 0 "$rc" "exit status after SIGTERM"
grep -q 'stopped by signal' "$log" || it_fail "no stop line in the log: $(cat "$log")"
scancel "$a" "$c" "$p"
it_pass
