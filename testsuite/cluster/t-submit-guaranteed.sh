#!/bin/bash
# Guaranteed jobs under a busy mix: five quotas each get more guaranteed work (1-2 GPU jobs of
# 8-25 s, --quota) than they own, while `only` and `acceptable` jobs borrow every idle GPU and are
# preempted as the guaranteed work comes and goes. Sampled every second for SECONDS (default 150):
#   - the GPUs of running jobs in each quota partition never exceed the quota's size;
#   - no job is preempted while it runs in a quota partition (its Restarts never grow after it
#     was seen there; no PREEMPTED record of a quota partition in sacct).
# The mix must really be busy: some quota reaches its size and some idle-time job is preempted.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
it_begin
grep -q '^JobSubmitPlugins=idletime' "$IC_CONF" || it_fail "cluster runs without job_submit/idletime"
SECONDS_TO_RUN=${1:-150}
CONFIG=$(sed -n 's/.*spank_idletime.so.*config=\([^ ]*\).*/\1/p' "$IC_ETC/plugstack.conf")
OUT=$IC_DIR/out
IDLE_JOB='trap "echo NOTICE" USR1; for _ in $(seq 900); do sleep 1; done'
T0=$(date +%Y-%m-%dT%H:%M:%S)
declare -A LIMIT MAX
while read -r q g; do LIMIT[quota-$q]=$g MAX[quota-$q]=0; done < <(jq -r '.quotas[] | select(.gpus > 0) | "\(.name) \(.gpus)"' "$CONFIG")

# guaranteed USER QUOTA SPEC COUNT: COUNT jobs of 1-2 GPUs, 8-25 s each.
guaranteed() {
	local i
	for ((i = 0; i < $4; i++)); do
		it_submit "$1" -J g-$2 --quota="$2" -N1 --gres=gpu:$3:$((1 + RANDOM % 2)) -o /dev/null \
			--wrap="sleep $((8 + RANDOM % 18))" >/dev/null || it_fail "sbatch guaranteed $2"
	done
}
idle() { # idle USER MODE SPEC GPUS COUNT [--quota=Q]
	local i
	for ((i = 0; i < $5; i++)); do
		it_submit "$1" -J i-$2 --idle-resources="$2" "${@:6}" -N1 --gres=gpu:$3:$4 -o "$OUT/mix-%j.out" \
			--wrap="$IDLE_JOB" >/dev/null || it_fail "sbatch idle $1 $2"
	done
}
# Borrowers first, until they hold every GPU: all four a100 nodes, h100-main and h100-beta.
idle alice only a100 4 2
idle carol only a100 4 2
idle alice only h100 4 2 --quota=team-h
idle dave only h100 4 2
ic_poll 60 sh -c '[ "$(squeue -h -t R -n i-only | wc -l)" = 8 ]' || it_fail "idle-time jobs did not fill the GPUs: $(squeue -h -o '%i %j %T %r' | tr '\n' ' ')"
idle alice acceptable a100 2 2
guaranteed alice team-a a100 6
guaranteed bob team-b a100 6
guaranteed carol team-c a100 8
guaranteed alice team-h h100 8
guaranteed dave team-x h100 8

declare -A SEEN
samples=0 end=$(($(date +%s) + SECONDS_TO_RUN))
while [ "$(date +%s)" -lt "$end" ]; do
	declare -A SUM=()
	while read -r id part restarts tres; do
		[[ $part == quota-* ]] || continue
		# an acceptable job may run in a quota partition after being preempted on idle capacity
		[ -n "${SEEN[$id]:-}" ] || SEEN[$id]="$part $restarts"
		g=$(tr ',' '\n' <<<"$tres" | sed -n 's#^gres/gpu=##p')
		SUM[$part]=$((${SUM[$part]:-0} + ${g:-0}))
	done < <(squeue -h -t R -O 'JobID:12,Partition:24,RestartCnt:6,tres-alloc:120')
	for part in "${!SUM[@]}"; do
		[ -n "${LIMIT[$part]:-}" ] || continue
		[ "${SUM[$part]}" -le "${LIMIT[$part]}" ] || it_fail "sample $samples: $part runs ${SUM[$part]} GPUs, quota ${LIMIT[$part]}"
		[ "${SUM[$part]}" -le "${MAX[$part]}" ] || MAX[$part]=${SUM[$part]}
	done
	unset SUM
	samples=$((samples + 1))
	sleep 1
done
summary=$(for p in "${!MAX[@]}"; do echo -n "$p max ${MAX[$p]}/${LIMIT[$p]}; "; done)
it_info "$samples samples, ${#SEEN[@]} jobs ran in quota partitions: $summary"

full=0
for p in "${!MAX[@]}"; do [ "${MAX[$p]}" -lt "${LIMIT[$p]}" ] || full=$((full + 1)); done
[ "$full" -gt 0 ] || it_fail "no quota ever reached its size: the mix was not busy ($summary)"
for id in "${!SEEN[@]}"; do
	r=$(it_job_field "$id" Restarts)
	[ "${r:-0}" = "${SEEN[$id]#* }" ] || it_fail "job $id requeued after running in ${SEEN[$id]% *} (Restarts ${SEEN[$id]#* } -> $r)"
done
# slurmdbd records asynchronously (seconds, more on a loaded machine): wait for the first
# PREEMPTED record, then 2 s more for the others. -D: a requeued job's earlier records too.
sacct_preempted() { sacct -n -X -D -P -S "$T0" -o JobID,Partition,JobName,State | awk -F"|" '$4 == "PREEMPTED"'; }
some_preempted() { [ -n "$(sacct_preempted)" ]; }
ic_poll 30 some_preempted || true  # the assertions below say what sacct shows
sleep 2
preempted=$(sacct_preempted)
bad=$(awk -F'|' '$2 ~ /^quota-/' <<<"$preempted")
[ -z "$bad" ] || it_fail "jobs preempted in a quota partition: $bad"
n=$(grep -c . <<<"$preempted" || true)
[ "$n" -gt 0 ] || it_fail "no idle-time job was preempted: the mix never needed the borrowed GPUs"
it_info "$n preemptions, all of idle-time jobs ($(cut -d'|' -f2 <<<"$preempted" | sort | uniq -c | tr -s ' \n' ' '))"
it_pass
