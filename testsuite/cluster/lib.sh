# shellcheck shell=bash
# Helper library for tests against the local cluster. Source it from testsuite/cluster/t-NAME.sh:
#
#   . "$(dirname "$0")/lib.sh"
#   it_begin                      # names the test after the script, cleans jobs on exit
#   id=$(it_submit alice -p quota-team-a --gres=gpu:1 --wrap='sleep 60') || it_fail "sbatch"
#   it_wait_state "$id" RUNNING 30 || it_fail "job $id never ran"
#   it_pass                       # prints PASS t-NAME, exit 0
#
# A test exits 0 (PASS t-NAME) or 1 (FAIL t-NAME: reason). Times are seconds; polls every 0.2 s.
# Env: IDLETIME_CLUSTER_DIR (state dir, default /var/tmp/idletime-cluster).

# shellcheck source=common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

IT_NAME=${IT_NAME:-$(basename "${0%.sh}")}
export IT_JOBS_DIR=$IC_SRC/jobs   # job scripts of the tests
IT_POLL=0.2

# Test header: checks the cluster answers, registers job cleanup on exit.
it_begin() {
	ic_ctld_up || { echo "FAIL $IT_NAME: cluster not running (run testsuite/cluster/start.sh)"; exit 1; }
	trap 'it_cleanup_jobs' EXIT
	it_cleanup_jobs
}

# it_release_requeue_delay JOBID: start a requeued job now instead of after Slurm's 121 s delay.
# Waits until the requeue's second is over first: slurmd revokes the last run's credential with
# 1 s resolution, and a run started in that second is killed ("Job credential revoked"). StartTime
# in the future would not do: nothing triggers a scheduling pass when it passes. A job that has
# left PENDING meanwhile (idletime-ft-hook lifts the hold of a preempted run) needs nothing.
it_release_requeue_delay() {
	local t0 err
	t0=$(date +%s)
	while [ "$(date +%s)" -le $((t0 + 1)) ]; do sleep 0.2; done
	err=$(scontrol update jobid="$1" StartTime=now 2>&1) && return 0
	[ "$(it_job_field "$1" JobState)" != PENDING ] && return 0
	echo "$err" >&2
	return 1
}

it_pass() {
	echo "PASS $IT_NAME"
	exit 0
}

# it_fail MSG: prints FAIL t-NAME: MSG and exits 1 (the EXIT trap cancels the test's jobs).
it_fail() {
	echo "FAIL $IT_NAME: $*"
	exit 1
}

it_info() { echo "  $IT_NAME: $*" >&2; }

# it_submit USER SBATCH-ARGS...: sbatch as USER (from USER's home); prints the job id.
# Output goes to STATEDIR/out/<job name>-<id>.out unless the args give --output. sbatch runs with
# a clean login-like environment (HOME USER LOGNAME SHELL PATH LANG SLURM_CONF + $IT_SUBMIT_ENV).
it_submit() {
	local user=$1 out home
	shift
	home=$(getent passwd "$user" | cut -d: -f6)
	# A login-like environment (root's must not leak into the job); default output under the
	# state dir (later args override it). IT_SUBMIT_ENV: extra NAME=VALUE words.
	# shellcheck disable=SC2086 # IT_SUBMIT_ENV is a word list
	out=$(cd "${home:-/tmp}" && runuser -u "$user" -- env -i HOME="${home:-/tmp}" USER="$user" LOGNAME="$user" \
		SHELL=/bin/bash PATH=$IC_SLURM_PATH${PREFIX:-/usr/local}/bin:/usr/bin:/bin LANG=C.UTF-8 SLURM_CONF="$SLURM_CONF" ${IT_SUBMIT_ENV:-} \
		sbatch --parsable --output="$IC_DIR/out/%x-%j.out" "$@" 2>&1) || {
		echo "it_submit: sbatch as $user failed: $out" >&2
		return 1
	}
	out=${out##*$'\n'}
	echo "${out%%;*}"
}

# it_job_field JOBID FIELD: value of FIELD in `scontrol show job -o JOBID` (empty if unknown).
it_job_field() {
	scontrol show job -o "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n1
}

# it_job_gpus JOBID: GPUs Slurm allocated to the job (gres/gpu of its allocated TRES: TRES= in
# Slurm 22.05, AllocTRES= since 23.02).
it_job_gpus() {
	local t
	t=$(it_job_field "$1" AllocTRES)
	[ -n "$t" ] || t=$(it_job_field "$1" TRES)
	tr ',' '\n' <<<"$t" | sed -n 's#^gres/gpu=##p'
}

# it_job_out JOBID: path of the job's stdout file (StdOut of scontrol, %j etc. expanded).
it_job_out() { it_job_field "$1" StdOut; }

# it_wait_field JOBID FIELD REGEX TIMEOUT: poll until FIELD matches ^(REGEX)$.
it_wait_field() {
	local id=$1 field=$2 want=$3 timeout=$4 deadline v
	deadline=$(($(date +%s%N) + timeout * 1000000000))
	while :; do
		v=$(it_job_field "$id" "$field")
		[[ $v =~ ^($want)$ ]] && return 0
		if [ "$(date +%s%N)" -ge "$deadline" ]; then
			echo "it_wait: job $id $field=$v, wanted $want within ${timeout}s" >&2
			return 1
		fi
		sleep "$IT_POLL"
	done
}

# it_wait_state JOBID STATE TIMEOUT: STATE may be an alternation, e.g. 'PENDING|RUNNING'.
it_wait_state() { it_wait_field "$1" JobState "$2" "$3"; }

# it_wait_reason JOBID REASON TIMEOUT: the pending reason (appears after a scheduler pass).
it_wait_reason() { it_wait_field "$1" Reason "$2" "$3"; }

# it_assert_eq EXPECTED ACTUAL WHAT: fails the test when they differ.
it_assert_eq() {
	[ "$1" = "$2" ] || it_fail "$3: expected '$1', got '$2'"
}

# it_python_dir PREFIX: the directory `make install` put the idletime Python package in (configure's
# choice, e.g. /usr/local/lib/python3.11/dist-packages), from PREFIX's idletime-ckpt.pc.
it_python_dir() {
	pkg-config --variable=pythondir "$1/lib/pkgconfig/idletime-ckpt.pc" 2>/dev/null
}

# it_cleanup_jobs: cancel every job of the cluster and wait (IT_CLEANUP_TIMEOUT, 90 s) until none is left.
it_cleanup_jobs() {
	local ids
	ids=$(squeue -h -o %i 2>/dev/null) || return 0
	[ -n "$ids" ] || return 0
	# shellcheck disable=SC2086 # list of ids
	scancel --quiet $ids 2>/dev/null || true
	ic_poll "${IT_CLEANUP_TIMEOUT:-90}" it_no_jobs || { echo "it_cleanup_jobs: jobs left: $(squeue -h -o '%i %T' | tr '\n' ' ')" >&2; return 1; }
}
it_no_jobs() { [ -z "$(squeue -h -o %i 2>/dev/null)" ]; }

# it_partition_of_account ACCOUNT: the quota partition (quota-*) whose AllowAccounts has ACCOUNT.
it_partition_of_account() {
	scontrol show partition -o | awk -v a="$1" '{
		name = ""; ok = 0
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^PartitionName=quota-/) name = substr($i, 15)
			if ($i ~ /^AllowAccounts=/) { n = split(substr($i, 15), l, ","); for (j = 1; j <= n; j++) if (l[j] == a) ok = 1 }
		}
		if (name != "" && ok) { print name; exit }
	}'
}

# it_partition_field PARTITION FIELD: value from `scontrol show partition -o`.
it_partition_field() {
	scontrol show partition -o "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n1
}

# it_idle_partition_of NODES: the idle-* partition over exactly NODES (Slurm hostlist).
it_idle_partition_of() {
	scontrol show partition -o | awk -v n="Nodes=$1" '$1 ~ /^PartitionName=idle-/ { for (i = 1; i <= NF; i++) if ($i == n) { print substr($1, 15); exit } }'
}

# it_qos_gpu_limit QOS: N of GrpTRES gres/gpu=N (empty when unlimited).
it_qos_gpu_limit() {
	sacctmgr -n -P show qos where name="$1" format=GrpTRES | tr ',' '\n' | sed -n 's#^gres/gpu=##p'
}
