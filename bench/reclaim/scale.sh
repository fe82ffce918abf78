#!/bin/bash
# bench/reclaim/scale.sh: reclaim at scale (issue 14, goals 1 and 3). Needs the cluster of
# bench/reclaim/scale64.json: pool a100-big = 64 emulated nodes x 8 GPUs (one slurmd each), quotas
# team-a and team-b of 256 GPUs each; or of scale64x32.json (64 x 32 GPUs: 2,048 running jobs,
# with VICTIM=replay-job to fit this machine's memory); or of scale64x1.json (64 x 1 GPU: N=64
# without the load of a large fill; needs OWNER_GPUS=1, and PENDING=64 suits it). Start any of
# them with --extra-conf bench/reclaim/scale-slurm.conf --extra-conf
# bench/reclaim/scale-cgroup-slurm.conf --cgroup-conf bench/reclaim/scale-cgroup.conf, so an
# ending step does not read /proc of all 64 emulated nodes (doc/design/reclaim-at-2048.md). The run:
#   1. fills all GPUs of a100-big with one-GPU idle-time jobs of carol (arrays scale-v: they save
#      on the notice and call release()) and queues PENDING more idle-time jobs (scale-p);
#   2. per N: N guaranteed jobs of alice (team-a) and bob (team-b), OWNER_GPUS each, are submitted
#      together; prints when all ran (each owner's own start line - its own sbatch; from the
#      first sbatch; from slurmctld's acceptance of each submission), the slowest victim save,
#      victims per owner, victims preempted twice,
#      idle-time job starts during the reclaim (thrashing), slurmctld's sdiag cycle times and
#      preempt/idletime's time per call (its slurmctld log line); then cancels the owners and
#      prints when every preempted victim ran again (resume);
#   3. the same for the largest N with victims that ignore the notice (Slurm alone: GraceTime,
#      SIGTERM, KillWait), and the ratio.
# Usage: scale.sh [N...]   (default 1 4 16 64; N <= 64)
# Env: OWNER_GPUS (GPUs per owner, 1-8, default 8: with 8 the 64 owners need the whole pool; with 1
# each owner needs one victim), SUBMIT (serial: one sbatch after the other, the default; parallel:
# the N sbatch run at the same time), OWNER_RUN (s the owners run before their scancel, default 3),
# PENDING (default 1536), SAVE_MB (default 1), NATIVE (default 1; 0 skips step 3), VICTIM (probe:
# jobs/notice_probe.py, saves SAVE_MB MiB, ~17 MiB each, the default; replay-job:
# idletime-replay-job(1) through jobs/replay-victim.sh, saves 8 bytes, ~2 MiB; needs NATIVE=0),
# KEEP (1: leave every job running at the end, and reuse a fill left so by the last KEEP=1 run:
# saves the fill and the mass end, ~7 minutes at 2,048 jobs; default 0),
# IDLETIME_CLUSTER_DIR / IDLETIME_CLUSTER_PORT_BASE, IDLETIME_PREFIX. Takes 15-25 minutes.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck disable=SC2034 # read by lib.sh
IT_NAME=bench-reclaim-scale
# shellcheck source=../../testsuite/cluster/lib.sh
. "$here/../../testsuite/cluster/lib.sh"
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=scale-lib.sh
. "$here/scale-lib.sh"
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1 4 16 64)
for n in "${sizes[@]}"; do
	if ! [[ $n =~ ^[0-9]+$ ]] || [ "$n" -lt 1 ] || [ "$n" -gt 64 ]; then
		echo "bench/reclaim/scale: N must be 1-64 (at most 64 owners: with OWNER_GPUS=8 one per node of a100-big), not '$n'" >&2
		exit 2
	fi
done
OWNER_GPUS=${OWNER_GPUS:-8}
[[ $OWNER_GPUS =~ ^[1-8]$ ]] || { echo "bench/reclaim/scale: OWNER_GPUS must be 1-8 (GPUs of one node), not '$OWNER_GPUS'" >&2; exit 2; }
SUBMIT=${SUBMIT:-serial}
[[ $SUBMIT =~ ^(serial|parallel)$ ]] || { echo "bench/reclaim/scale: SUBMIT must be serial or parallel, not '$SUBMIT'" >&2; exit 2; }
pending=${PENDING:-1536}
[[ $pending =~ ^[0-9]+$ ]] || { echo "bench/reclaim/scale: PENDING must be a number, not '$pending'" >&2; exit 2; }
VICTIM=${VICTIM:-probe}
[[ $VICTIM =~ ^(probe|replay-job)$ ]] || { echo "bench/reclaim/scale: VICTIM must be probe or replay-job, not '$VICTIM'" >&2; exit 2; }
[ "$VICTIM" = probe ] || [ "${NATIVE:-1}" = 0 ] || { echo "bench/reclaim/scale: VICTIM=replay-job always releases (no Slurm-alone round): set NATIVE=0" >&2; exit 2; }
if [ "$VICTIM" = replay-job ] && ! [ -x "${IDLETIME_PREFIX:-${PREFIX:-/usr/local}}/bin/idletime-replay-job" ]; then
	echo "bench/reclaim/scale: VICTIM=replay-job needs ${IDLETIME_PREFIX:-${PREFIX:-/usr/local}}/bin/idletime-replay-job (make install, or set IDLETIME_PREFIX)" >&2
	exit 2
fi
KEEP=${KEEP:-0}
[[ $KEEP =~ ^[01]$ ]] || { echo "bench/reclaim/scale: KEEP must be 0 or 1, not '$KEEP'" >&2; exit 2; }
# The Slurm-alone round refills with victims that ignore the notice: nothing a next run may reuse.
[ "$KEEP" = 0 ] || [ "${NATIVE:-1}" = 0 ] || { echo "bench/reclaim/scale: KEEP=1 needs NATIVE=0 (the Slurm-alone round cancels and refills)" >&2; exit 2; }
if [ "$KEEP" = 1 ]; then  # no EXIT trap: the jobs stay for the next KEEP=1 run
	ic_ctld_up || { echo "bench/reclaim/scale: cluster not running (testsuite/cluster/start.sh)" >&2; exit 1; }
else
	it_begin
fi
rc_env || exit 1
nodes=$(sinfo -h -p idle-a100-big -o '%D %G' 2>/dev/null)
SC_GPUS=$(awk '{g = $2; sub(/\(.*/, "", g); n = split(g, f, ":"); print $1 * f[n]}' <<<"$nodes")
if [ "${nodes%% *}" != 64 ] || [ "${SC_GPUS:-0}" -lt 64 ]; then
	echo "bench/reclaim/scale: needs the cluster of bench/reclaim/scale64.json, scale64x32.json or scale64x1.json (start.sh --config bench/reclaim/scale64.json [--extra-conf bench/reclaim/scale-slurm.conf for preempt/idletime]); idle-a100-big has '${nodes:-no nodes}'" >&2
	exit 2
fi
if [ $((SC_GPUS / 64)) -lt "$OWNER_GPUS" ]; then
	echo "bench/reclaim/scale: OWNER_GPUS=$OWNER_GPUS, but the nodes of idle-a100-big have $((SC_GPUS / 64)) GPUs each" >&2
	exit 2
fi
header="bench/reclaim/scale: 64 nodes, $SC_GPUS GPUs, owners of $OWNER_GPUS GPUs submitted $SUBMIT, victims $VICTIM$([ "$VICTIM" = probe ] && echo " saving ${SAVE_MB:-1} MiB"); $(scontrol show config | grep -E '^(PreemptType|SchedulerParameters) ' | tr -s ' ' | tr '\n' ' ')"
sc_undrain
if [ "$KEEP" = 1 ] && sc_filled; then
	echo "$header"
	echo "bench/reclaim/scale: KEEP=1: the $SC_GPUS victims and the queued jobs of the last KEEP=1 run are reused (no fill; the plugins and libraries they loaded are those of that run)"
else
	it_cleanup_jobs >/dev/null 2>&1
	sc_undrain
	rm -f "$IC_DIR"/out/scale-*.out
	echo "$header"
	sc_fill release "$pending" || exit 1
	sc_fill_stamp >"$IC_DIR/out/scale-fill.stamp"
	sc_memory
fi
for n in "${sizes[@]}"; do
	sc_round "$n" || exit 1
	sc_resume || exit 1
done
[ "${NATIVE:-1}" = 1 ] || exit 0
big=${sizes[-1]}
it_cleanup_jobs >/dev/null 2>&1 || { echo "bench/reclaim/scale: jobs left before the native round" >&2; exit 1; }
sc_undrain
rm -f "$IC_DIR"/out/scale-*.out
sc_fill ignore 0 || exit 1
sc_round "$big" native || exit 1
awk -v a="$SC_LAST_NATIVE" -v b="$SC_LAST_IDLETIME" -v n="$big" \
	'BEGIN { if (b > 0) printf "N=%d ratio native/idletime (all owners running): %.1fx\n", n, a / b }'
it_cleanup_jobs >/dev/null 2>&1
exit 0
