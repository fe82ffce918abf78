# shellcheck shell=bash
# Steps of bench/reclaim/scale.sh (source after lib.sh). Victims are array tasks of carol named
# scale-v (output $IC_DIR/out/scale-v-<jobid>.out, appended over requeues), queued idle-time jobs
# scale-p, owners scale-o. Sets SC_LAST_IDLETIME / SC_LAST_NATIVE (slowest owner, s) for scale.sh.
# shellcheck disable=SC2034 # SC_LAST_* are read by scale.sh

sc_victim_files() { ls "$IC_DIR"/out/scale-v-*.out 2>/dev/null; }
# sc_ev FILE...: the victims' events as the Python probe prints them ("ready <t> ...",
# "notice <t>", "saved <t> step=<n> seconds=<save time>"); idletime-replay-job's lines
# ("<t> start|notice|saved|release ...", VICTIM=replay-job) are rewritten to that form, its save
# time being saved - notice.
sc_ev() {
	awk '$1 ~ /^[0-9]+\.[0-9]+$/ && NF >= 2 {
		if ($2 == "notice") nt[FILENAME] = $1
		if ($2 == "start") print "ready", $1
		else if ($2 == "saved") printf "saved %s step=0 seconds=%.3f\n", $1, (FILENAME in nt) ? $1 - nt[FILENAME] : 0
		else print $2, $1
		next }
		{ print }' "$@" 2>/dev/null
}
# sc_ready_files: victims that printed "ready" (probe) or "start" (replay-job) at least once.
sc_ready_files() { grep -l -E '^ready |^[0-9.]+ start ' "$IC_DIR"/out/scale-v-*.out 2>/dev/null | wc -l; }
# sc_lines_after KEY T GLOB: lines "KEY <t> ..." with t > T in the files of GLOB.
# shellcheck disable=SC2086 # GLOB on purpose
sc_lines_after() { sc_ev $3 | awk -v k="$1" -v t="$2" '$1 == k && $2 + 0 > t + 0' | wc -l; }
# sc_notice_counts: "file count" of notices per victim.
sc_notice_counts() { for f in $(sc_victim_files); do echo "$f $(grep -c -E '^notice|^[0-9.]+ notice ' "$f")"; done; }
sc_rss_mib() { ps -o rss= "$@" 2>/dev/null | awk '{s += $1} END {printf "%.0f", s / 1024}'; }
# sc_pss_mib PID...: proportional set size (shared pages divided among their users: what the
# processes take together, where RSS counts each shared library once per process), MiB.
sc_pss_mib() {
	local p
	for p in "$@"; do cat "/proc/$p/smaps_rollup" 2>/dev/null; done | awk '$1 == "Pss:" {s += $2} END {printf "%.0f", s / 1024}'
}

# sc_fill MODE PENDING: SC_GPUS one-GPU victims (all GPUs of a100-big; notice: release or
# ignore) all ready, then PENDING more idle-time jobs queued behind them. VICTIM=replay-job runs
# idletime-replay-job (always releases) instead of the Python probe.
sc_fill() {
	local mode=$1 pend=$2 t0 c left deadline
	local -a cmd=("$RC_JOBS/probe-exec.sh" --on-notice "$mode" --save-mb "${SAVE_MB:-1}" --poll-interval 0.25)
	[ "$VICTIM" = probe ] || cmd=("$RC_JOBS/replay-victim.sh")
	t0=$(rc_now)
	left=$SC_GPUS
	while [ "$left" -gt 0 ]; do  # arrays of at most 512 (MaxArraySize is 1001 by default)
		c=$((left > 512 ? 512 : left))
		IT_SUBMIT_ENV="$IT_SUBMIT_ENV IDLETIME_PREFIX=$RC_PREFIX" it_submit carol -J scale-v --open-mode=append --idle-resources=only -p idle-a100-big --array=1-"$c" \
			--gres=gpu:a100:1 "${cmd[@]}" >/dev/null || return 1
		left=$((left - c))
	done
	deadline=$(($(date +%s) + (SC_GPUS * 3 > 1500 ? SC_GPUS * 3 : 1500)))
	until [ "$(sc_ready_files)" -ge "$SC_GPUS" ]; do
		[ "$(date +%s)" -lt "$deadline" ] || { echo "sc_fill: only $(sc_ready_files) of $SC_GPUS victims ready after $((deadline - ${t0%.*})) s" >&2; return 1; }
		sleep 3
	done
	echo "fill ($mode, $VICTIM): $SC_GPUS one-GPU idle-time jobs running and ready $(rc_sub "$(rc_now)" "$t0") s after the first sbatch --array"
	left=$pend
	while [ "$left" -gt 0 ]; do
		c=$((left > 1000 ? 1000 : left))
		it_submit carol -J scale-p --idle-resources=only -p idle-a100-big --array=1-"$c" --gres=gpu:a100:1 "$RC_JOBS/owner.sh" 3600 >/dev/null || return 1
		left=$((left - c))
	done
	[ "$pend" = 0 ] || echo "queued: $(squeue -h -r -n scale-p -t PD | wc -l) more idle-time jobs pending (scale-p); jobs in slurmctld: $(squeue -h -r | wc -l)"
}

sc_memory() {
	local -a ctld slurmd stepd vict
	local pat=notice_probe.py
	[ "$VICTIM" = probe ] || pat='idletime-replay-job --work'
	mapfile -t ctld < <(pgrep -x slurmctld)
	mapfile -t slurmd < <(pgrep -x slurmd)
	mapfile -t stepd < <(pgrep -x slurmstepd)
	mapfile -t vict < <(pgrep -f -- "$pat")
	echo "memory (RSS, each process alone): slurmctld $(sc_rss_mib -C slurmctld) MiB, ${#slurmd[@]} slurmd $(sc_rss_mib -C slurmd) MiB, ${#stepd[@]} slurmstepd $(sc_rss_mib -C slurmstepd) MiB, ${#vict[@]} victim processes $(sc_rss_mib -p "$(IFS=,; echo "${vict[*]:-1}")") MiB"
	echo "memory (PSS, shared pages split among their users): slurmctld $(sc_pss_mib "${ctld[@]}") MiB, slurmd $(sc_pss_mib "${slurmd[@]}") MiB, slurmstepd $(sc_pss_mib "${stepd[@]}") MiB, victims $(sc_pss_mib "${vict[@]}") MiB; MemAvailable $(awk '/^MemAvailable/ {printf "%.0f", $2 / 1024}' /proc/meminfo) of $(awk '/^MemTotal/ {printf "%.0f", $2 / 1024}' /proc/meminfo) MiB; tasks (threads) $(ps -e -L --no-headers | wc -l) of kernel.pid_max $(cat /proc/sys/kernel/pid_max)"
}

# sc_sdiag: slurmctld's main and backfill scheduling cycles since the last `sdiag -r`.
sc_sdiag() {
	sdiag 2>/dev/null | awk '
		/^Main schedule statistics/ { s = "main" } /^Backfilling stats/ { s = "backfill" }
		/^Latency for|^Remote Procedure Call/ { s = "" }
		s != "" && /^[ \t]*Total cycles:/ { n[s] = $3 }
		s != "" && /^[ \t]*Max cycle:/ { mx[s] = $3 }
		s != "" && /^[ \t]*Mean cycle:/ { mn[s] = $3 }
		END { for (k in n) printf "%s %s cycles, mean %.1f ms, max %.1f ms; ", k, n[k], mn[k] / 1000, mx[k] / 1000 }'
}

# sc_rpcs: the RPCs slurmctld served since the last `sdiag -r` that idletime-ft-hook and the
# checkpoint library send (job loads, the federation lookup libslurm adds to a load without
# SHOW_LOCAL, updates, requeues) and those that end a victim's run (slurmstepd's batch script
# and step completions, slurmd's epilog completion), with their mean time in slurmctld.
sc_rpcs() {
	sdiag 2>/dev/null | awk '
		/^Remote Procedure Call statistics by message type/ { s = 1; next } /^Remote Procedure Call statistics by user/ { s = 0 }
		s && $1 ~ /^(REQUEST_FED_INFO|REQUEST_JOB_INFO_SINGLE|REQUEST_JOB_INFO|REQUEST_UPDATE_JOB|REQUEST_JOB_REQUEUE|REQUEST_SUBMIT_BATCH_JOB|REQUEST_COMPLETE_BATCH_SCRIPT|REQUEST_STEP_COMPLETE|MESSAGE_EPILOG_COMPLETE)$/ {
			c = $0; sub(/.*count:/, "", c); sub(/ .*/, "", c); a = $0; sub(/.*ave_time:/, "", a); sub(/ .*/, "", a)
			printf "%s %s (mean %.1f ms); ", $1, c, a / 1000 }'
}

# sc_submit_one USER QUOTA: one owner of OWNER_GPUS GPUs; prints "<submit time> <job id>".
sc_submit_one() {
	local t o
	t=$(rc_now)
	o=$(it_submit "$1" -J scale-o --quota="$2" --gres=gpu:a100:"$OWNER_GPUS" "$RC_JOBS/owner.sh" 3600) || return 1
	echo "$t $o"
}

# sc_submit_owners N: N owners of alice (team-a) and bob (team-b) in turn, one sbatch after the
# other, or all N sbatch at the same time with SUBMIT=parallel; prints sc_submit_one's lines.
sc_submit_owners() {
	local n=$1 i d user quota rc=0
	d=$(mktemp -d) || return 1
	for i in $(seq "$n"); do
		if [ $((i % 2)) = 1 ]; then user=alice quota=team-a; else user=bob quota=team-b; fi
		if [ "$SUBMIT" = parallel ]; then
			sc_submit_one "$user" "$quota" >"$d/$i" &
		else
			sc_submit_one "$user" "$quota" >"$d/$i" || break
		fi
	done
	wait
	for i in $(seq "$n"); do
		[ -s "$d/$i" ] || { echo "sc_submit_owners: owner $i of $n was not submitted" >&2; rc=1; break; }
	done
	if [ "$rc" = 0 ]; then
		cat "$d"/*
	else  # no round with fewer owners: cancel the ones submitted
		# shellcheck disable=SC2046 # job ids
		scancel $(cat "$d"/* 2>/dev/null | awk '{print $2}') 2>/dev/null
	fi
	rm -rf "$d"
	return "$rc"
}

# sc_round N [native]: N owners at once; prints the results. Sets SC_OWNERS, SC_PREEMPTED.
sc_round() {
	local n=$1 mode=${2:-idletime} t0 i o lat max=0 tall=0 st save vict twice starts pstarts log0 subs
	local -a own=() tsub=() lats=() starts_at=()
	local before after
	before=$(mktemp) after=$(mktemp)
	sc_notice_counts >"$before"
	sdiag -r >/dev/null 2>&1
	log0=$(wc -l <"$IC_LOGD/slurmctld.log")
	t0=$(rc_now)
	subs=$(sc_submit_owners "$n") || return 1
	while read -r st o; do
		tsub+=("$st")
		own+=("$o")
	done <<<"$subs"
	for i in "${!own[@]}"; do
		rc_wait_line "$(rc_out scale-o "${own[$i]}")" '^started ' 300 || { echo "owner ${own[$i]}: $(it_job_field "${own[$i]}" JobState)/$(it_job_field "${own[$i]}" Reason)" >&2; return 1; }
		st=$(rc_word "$(rc_out scale-o "${own[$i]}")" started)
		lat=$(rc_sub "$st" "${tsub[$i]}")
		lats+=("$lat")
		starts_at+=("${own[$i]} $st")
		rc_le "$lat" "$max" || max=$lat
		rc_le "$st" "$tall" || tall=$st
	done
	sc_notice_counts >"$after"
	SC_PREEMPTED=$(join "$before" "$after" | awk '$3 > $2 {print $1}')
	vict=$(join "$before" "$after" | awk '$3 > $2' | wc -l)
	twice=$(join "$before" "$after" | awk '$3 > $2 + 1' | wc -l)
	rm -f "$before" "$after"
	save=$(sc_ev "$IC_DIR"/out/scale-v-*.out | awk -v t="$t0" '$1 == "saved" && $2 > t { sub("seconds=", "", $4); if ($4 > m) m = $4 } END { printf "%.3f", m }')
	starts=$(sc_lines_after ready "$t0" "$IC_DIR/out/scale-v-*.out")
	pstarts=$(sc_lines_after started "$t0" "$IC_DIR/out/scale-p-*.out")
	SC_OWNERS="${own[*]}" SC_LAST_START=$tall
	printf 'N=%d %s: all owners running %s s after their own sbatch (median %s s), %s s after the first sbatch; slowest save %s s\n' \
		"$n" "$mode" "$max" "$(printf '%s\n' "${lats[@]}" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')" \
		"$(rc_sub "$tall" "$t0")" "$save"
	printf '%s\n' "${starts_at[@]}" | sc_accepted_lat "$log0" "$n" "$mode"
	printf 'N=%d %s: victims %d (%s per owner, %d needed), preempted twice %d, idle-time starts during the reclaim %d (+%d queued jobs)\n' \
		"$n" "$mode" "$vict" "$(awk -v v="$vict" -v n="$n" 'BEGIN {printf "%.2f", v / n}')" "$OWNER_GPUS" "$twice" "$starts" "$pstarts"
	echo "N=$n $mode: sdiag: $(sc_sdiag)"
	echo "N=$n $mode: RPCs: $(sc_rpcs)"
	SC_LOG0=$log0 SC_N=$n SC_MODE=$mode
	[ "$mode" != native ] || { sleep 6; sc_plugin_time; }
	if [ "$mode" = native ]; then SC_LAST_NATIVE=$max; else SC_LAST_IDLETIME=$max; fi
}

# sc_accepted_lat LOG0 N MODE: reads "<job id> <start>" lines; prints how long after slurmctld
# accepted each submission (its "_slurm_rpc_submit_batch_job: JobId=" log line after line LOG0,
# millisecond timestamps) the owner ran: the time of the sbatch clients themselves (64 at once on
# 2 cores take seconds) left out. Issue 14 measured its baseline from Slurm's submit time too.
sc_accepted_lat() {
	awk -v n="$2" -v m="$3" '
		FNR == NR { start[$1] = $2; next }
		/_slurm_rpc_submit_batch_job: JobId=/ {
			t = substr($1, 2, 23); id = $0; sub(/.*JobId=/, "", id); sub(/ .*/, "", id)
			if (!(id in start)) next
			gsub(/[-T:]/, " ", t); split(t, f, ".")
			lat[++k] = start[id] - (mktime(f[1]) + ("0." f[2]))
		}
		END {
			if (!k) { printf "N=%d %s: no submission of these owners in the slurmctld log\n", n, m; exit }
			asort(lat)
			printf "N=%d %s: all owners running %.3f s after slurmctld accepted their submission (median %.3f s, %d of %d found)\n",
				n, m, lat[k], lat[int((k + 1) / 2)], k, length(start)
		}' - <(tail -n +"$(($1 + 1))" "$IC_LOGD/slurmctld.log")
}

# sc_resume: cancel the owners of the last round; prints when every victim it preempted ran again
# (its next "ready" line) and how many queued idle-time jobs started before them.
sc_resume() {
	local tc f r worst=0 deadline n pst back=0 id
	local -a lost=()
	n=$(wc -w <<<"$SC_PREEMPTED")
	# The owners run OWNER_RUN s (default 3) before their scancel. A victim may run again only 2 s
	# after its requeue (idletime-ft-hook's credential rule, notice-and-release.md section 5): an
	# owner that starts within 0.2 s of its sbatch and ends at once frees its GPU before its victim
	# is eligible, and a queued job takes it (section 10).
	while rc_le "$(rc_sub "$(rc_now)" "$SC_LAST_START")" "${OWNER_RUN:-3}"; do sleep 0.2; done
	tc=$(rc_now)
	# shellcheck disable=SC2086 # list of ids
	scancel $SC_OWNERS
	deadline=$(($(date +%s) + 300))
	for f in $SC_PREEMPTED; do
		until r=$(sc_ev "$f" | awk -v t="$tc" '$1 == "ready" && $2 > t {print $2; exit}') && [ -n "$r" ]; do
			[ "$(date +%s)" -lt "$deadline" ] || break
			sleep 1
		done
		if [ -z "$r" ]; then  # say why, keep going: the other numbers still count
			id=${f##*-}
			id=${id%.out}
			lost+=("$id:$(it_job_field "$id" JobState)/$(it_job_field "$id" Reason)")
			continue
		fi
		back=$((back + 1))
		rc_le "$(rc_sub "$r" "$tc")" "$worst" || worst=$(rc_sub "$r" "$tc")
	done
	pst=$(sc_lines_after started "$tc" "$IC_DIR/out/scale-p-*.out")
	echo "resume: $back of the $n preempted victims ran again, the last $worst s after the owners' scancel; queued idle-time jobs started meanwhile: $pst"
	[ ${#lost[@]} = 0 ] || echo "resume: not running again 300 s after the scancel: ${lost[*]:0:10}"
	ic_poll 120 sc_owners_gone || echo "sc_resume: owners still listed 120 s after their scancel" >&2
	sleep 6  # preempt/idletime logs its summary once the calls pause for 5 s
	sc_plugin_time
}

# sc_plugin_time: preempt/idletime's time per preemptable() call in slurmctld since the last
# round began (its summary lines "calls=N mean_us=M max_us=X ...; off_hold=K"), all lines together.
sc_plugin_time() {
	# grep finds nothing under preempt/partition_prio: not a failure (pipefail).
	tail -n +"$((SC_LOG0 + 1))" "$IC_LOGD/slurmctld.log" | { grep -o 'idletime/preempt: preemptable() calls=.*' || true; } |
		awk -v n="$SC_N" -v m="$SC_MODE" '{
			for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			c += v["calls"]; ns += v["calls"] * v["mean_us"]; if (v["max_us"] > mx) mx = v["max_us"]; off += v["off_hold"] }
			END { if (c || off) printf "N=%d %s: preempt/idletime preemptable(): %d calls with job views, mean %.1f us, max %.1f us; %d refused off held nodes\n", n, m, c, c ? ns / c : 0, mx, off
			      else printf "N=%d %s: no preempt/idletime summary in the slurmctld log (PreemptType?)\n", n, m }'
}
# sc_fill_stamp: what a fill was made of (the victims, their save size, the queued jobs).
sc_fill_stamp() { echo "victim=$VICTIM save_mb=${SAVE_MB:-1} pending=$pending"; }
# sc_filled: a fill of this run's kind (sc_fill_stamp) where every GPU of a100-big runs a victim
# (scale-v) and no owner (scale-o) is listed.
sc_filled() {
	[ "$(cat "$IC_DIR/out/scale-fill.stamp" 2>/dev/null)" = "$(sc_fill_stamp)" ] &&
		[ "$(squeue -h -t R -n scale-v -o %i 2>/dev/null | wc -l)" -ge "$SC_GPUS" ] &&
		[ -z "$(squeue -h -n scale-o -o %i 2>/dev/null)" ]
}
sc_owners_gone() { [ -z "$(squeue -h -j "${SC_OWNERS// /,}" 2>/dev/null)" ]; }

# sc_undrain: cancelling 512 running jobs at once (between rounds) can starve their slurmstepd
# past UnkillableStepTimeout on 2 cores, or their batch completion RPC past its retries; slurmd
# then drains the node "Kill task failed" ("batch job complete failure") and the
# next round would wait for it forever. Resumes those nodes of a100-big, with a line saying so.
sc_undrain() {
	local nodes
	nodes=$(sinfo -h -p idle-a100-big -R -o '%E|%N' 2>/dev/null |
		awk -F'|' '$1 == "Kill task failed" || $1 == "batch job complete failure" {print $2}' | paste -sd,)
	[ -n "$nodes" ] || return 0
	echo "bench/reclaim/scale: resuming nodes drained by Slurm ('Kill task failed' or 'batch job complete failure' after the mass cancel between rounds): $nodes"
	scontrol update NodeName="$nodes" State=RESUME
}

