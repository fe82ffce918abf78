# shellcheck shell=bash
# Helpers shared by bench/reclaim/run.sh and the cluster tests t-ckpt-*.sh / t-reclaim-*.sh.
# Source after testsuite/cluster/lib.sh. Times are epoch seconds with a fraction.
# Env: IDLETIME_PREFIX (where idletime is installed, default /usr/local).

RC_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RC_JOBS=$RC_DIR/jobs
RC_PREFIX=${IDLETIME_PREFIX:-${PREFIX:-/usr/local}}

# it_submit gives sbatch a clean environment plus $IT_SUBMIT_ENV: point the jobs at the installed
# Python package and library (so a build in another prefix works too) and at our job scripts.
rc_env() {
	local py
	py=$(it_python_dir "$RC_PREFIX")  # configure's choice, e.g. lib/python3.11/dist-packages
	[ -n "$py" ] && [ -d "$py/idletime" ] || { echo "rc_env: no idletime package in \"$py\" (make install?)" >&2; return 1; }
	[ -e "$RC_PREFIX/lib/libidletime-ckpt.so.0" ] || { echo "rc_env: $RC_PREFIX/lib/libidletime-ckpt.so.0 missing" >&2; return 1; }
	export PYTHONPATH=$py IDLETIME_CKPT_LIB=$RC_PREFIX/lib/libidletime-ckpt.so.0 RC_JOBS
	# The test cluster runs its own munged (a real cluster uses libmunge's default socket).
	IT_SUBMIT_ENV="PYTHONPATH=$PYTHONPATH IDLETIME_CKPT_LIB=$IDLETIME_CKPT_LIB RC_JOBS=$RC_JOBS"
	IT_SUBMIT_ENV+=" IDLETIME_MUNGE_SOCKET=$IC_SOCK ${IT_SUBMIT_ENV_EXTRA:-}"
}

rc_now() { date +%s.%N; }

# rc_out NAME ID: output file of a job submitted by it_submit with -J NAME.
rc_out() { echo "$IC_DIR/out/$1-$2.out"; }

# rc_wait_line FILE REGEX TIMEOUT: poll (0.1 s) until a line of FILE matches REGEX.
rc_wait_line() {
	local f=$1 re=$2 deadline
	deadline=$(($(date +%s%N) + $3 * 1000000000))
	until grep -qE "$re" "$f" 2>/dev/null; do
		[ "$(date +%s%N)" -lt "$deadline" ] || { echo "rc_wait_line: no /$re/ in $f within $3 s" >&2; return 1; }
		sleep 0.1
	done
}

# rc_word FILE KEY [N]: second word of the N-th (default last) line of FILE starting with "KEY ".
rc_word() {
	local lines
	lines=$(grep -E "^$2( |$)" "$1" 2>/dev/null) || return 1
	if [ -n "${3:-}" ]; then sed -n "${3}p" <<<"$lines"; else tail -n1 <<<"$lines"; fi | awk '{print $2}'
}

# rc_kv FILE KEY NAME: value of NAME=... on the last line starting with "KEY ".
rc_kv() { grep -E "^$2 " "$1" | tail -n1 | tr ' ' '\n' | sed -n "s/^$3=//p"; }

# rc_sub A B: A - B with 3 decimals.
rc_sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a - b }'; }

# rc_le A B: true when A <= B (decimals).
rc_le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }

# rc_preempt_round VICTIM_SCRIPT MODE NAME [PROBE ARGS...]: one victim (alice, idle-time job on
# a100-1, 4 GPUs) and one owner job (bob, quota team-b, a100-1). Sets RC_VICTIM RC_OWNER
# RC_T_SUBMIT (owner's sbatch) RC_T_START (owner's own start line) RC_T_NOTICE (victim's notice
# line, empty if none) RC_SAVE_S (victim's save time, empty if none). Returns 1 with a message.
rc_preempt_round() {
	local script=$1 mode=$2 name=$3 vout oout
	shift 3
	RC_VICTIM= RC_OWNER= RC_T_NOTICE= RC_SAVE_S=
	RC_VICTIM=$(it_submit alice -J "$name" --idle-resources=only -w a100-1 --gres=gpu:a100:4 \
		--open-mode=append "$RC_JOBS/$script" --on-notice "$mode" "$@") || return 1
	vout=$(rc_out "$name" "$RC_VICTIM")
	it_wait_state "$RC_VICTIM" "RUNNING|FAILED|COMPLETED|CANCELLED" 60 && [ "$(it_job_field "$RC_VICTIM" JobState)" = RUNNING ] || return 1
	rc_wait_line "$vout" '^ready ' 60 || return 1
	RC_T_SUBMIT=$(rc_now)
	RC_OWNER=$(it_submit bob -J "$name-owner" --quota=team-b -w a100-1 --gres=gpu:a100:4 \
		"$RC_JOBS/owner.sh" 600) || return 1
	oout=$(rc_out "$name-owner" "$RC_OWNER")
	rc_wait_line "$oout" '^started ' "${RC_OWNER_TIMEOUT:-200}" || return 1
	RC_T_START=$(rc_word "$oout" started)
	RC_T_NOTICE=$(rc_word "$vout" notice 1 || true)
	RC_SAVE_S=$(rc_kv "$vout" saved seconds || true)
	return 0
}

# rc_hook_configured: true when slurmctld runs idletime-ft-hook as EpilogSlurmctld (directly or
# through a wrapper script that execs it). Slurm 24.11 and later list each of several
# EpilogSlurmctld scripts as EpilogSlurmctld[N]; the first one is idletime's.
rc_hook_configured() {
	local p
	p=$(scontrol show config | sed -n 's/^EpilogSlurmctld\(\[0\]\)\? *= *//p')
	[ -n "$p" ] && [ "$p" != "(null)" ] || return 1
	[[ $(basename "$p") == idletime-ft-hook ]] || grep -q idletime-ft-hook "$p" 2>/dev/null
}

# rc_admin_comment JOBID: the ft record (AdminComment) of a job, from slurmctld or else sacct.
rc_admin_comment() {
	local c
	# The whole line: it_job_field stops at the first space, and a record's reasons have spaces
	# ("reclaimed by quota team-b (job 10)"): everything after the first one was cut off.
	c=$(scontrol show job "$1" 2>/dev/null | sed -n 's/^ *AdminComment=//p' | sed 's/ *$//' | head -n 1)
	# job_submit stamps the requested mode at submission ("m"); until the hook judged a run ("j")
	# the record of an ended job is only in accounting.
	[[ $c == *'"j":'* ]] || c=$(sacct -n -X -P -j "$1" -o AdminComment | tail -n1)
	echo "$c"
}

# rc_wait_admin JOBID REGEX TIMEOUT: poll until the ft record matches REGEX.
rc_wait_admin() {
	local deadline
	deadline=$(($(date +%s%N) + $3 * 1000000000))
	until [[ $(rc_admin_comment "$1") =~ $2 ]]; do
		[ "$(date +%s%N)" -lt "$deadline" ] || { echo "rc_wait_admin: job $1 record '$(rc_admin_comment "$1")' !~ $2" >&2; return 1; }
		sleep 0.2
	done
}


# rc_wait_count FILE REGEX N TIMEOUT: poll until at least N lines of FILE match REGEX.
rc_wait_count() {
	local deadline
	deadline=$(($(date +%s%N) + $4 * 1000000000))
	until [ "$(grep -cE "$2" "$1" 2>/dev/null)" -ge "$3" ]; do
		[ "$(date +%s%N)" -lt "$deadline" ] || { echo "rc_wait_count: fewer than $3 /$2/ lines in $1 within $4 s" >&2; return 1; }
		sleep 0.1
	done
}
