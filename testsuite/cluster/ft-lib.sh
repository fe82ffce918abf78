# shellcheck shell=bash
# Helpers of the t-ft-* tests (sourced after lib.sh).

# The installed agent (next to the hook the wrapper runs).
FT_HOOK_WRAPPER=$IC_BIN/idletime-ft-hook-wrapper
FT_RUN=

ft_require_hook() {
	grep -q "^EpilogSlurmctld=$FT_HOOK_WRAPPER\$" "$IC_CONF" || it_fail "cluster runs without the ft hook (EpilogSlurmctld)"
	local hook
	hook=$(sed -n 's/^exec \([^ ]*\) .*/\1/p' "$FT_HOOK_WRAPPER")
	FT_RUN=$(dirname "$(dirname "$hook")")/bin/idletime-run
	[ -x "$FT_RUN" ] || it_fail "no idletime-run at $FT_RUN"
	# shellcheck disable=SC2034 # used by the tests
	FT_LOG=$IC_LOGD/ft-hook.log
}

# ft_final JOBID: the job ended and the hook judged that run "fail" or "complete" (a failed run
# shows FAILED for a moment before the hook requeues it).
ft_final() {
	local st r last
	st=$(it_job_field "$1" JobState)
	[[ $st =~ ^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY)$ ]] || return 1
	r=$(it_job_field "$1" Restarts)
	last=$(ft_acct "$1" | grep -oE '"r":[0-9]+,"k":"[^"]*","w":"([^"\\]|\\.)*","a":"[a-z]*"' | tail -n1)
	[[ $last == '"r":'"$r"',"k"'*'"a":"fail"' || $last == '"r":'"$r"',"k"'*'"a":"complete"' ]]
}

# ft_wait_final JOBID TIMEOUT
ft_wait_final() {
	ic_poll "$2" ft_final "$1" && return 0
	echo "ft_wait_final: job $1 $(it_job_field "$1" JobState) Restarts=$(it_job_field "$1" Restarts) after ${2}s; AdminComment $(ft_acct "$1")" >&2
	return 1
}

# ft_acct JOBID: the AdminComment of the job's newest accounting record.
ft_acct() { sacct -n -P -X -D -j "$1" -o AdminComment 2>/dev/null | tail -n1; }

# ft_acct_has JOBID TEXT: polls (10 s) until the accounting AdminComment contains TEXT.
ft_acct_has() {
	local id=$1 text=$2 i
	for ((i = 0; i < 50; i++)); do
		[[ $(ft_acct "$id") == *"$text"* ]] && return 0
		sleep 0.2
	done
	return 1
}

# ft_admin JOBID: the live AdminComment (scontrol).
ft_admin() { scontrol show job "$1" 2>/dev/null | sed -n 's/^ *AdminComment=//p'; }

# ft_workers_submit RUNTYPE SECONDS: alice's job of three worker steps (idletime-run --srun
# --workers=3, one srun step each, ft-job.sh worker SECONDS) under --run-type=RUNTYPE; prints the id.
ft_workers_submit() {
	it_submit alice -J "ft-$1" -p quota-team-a -t 5 -N1 -n3 --open-mode=append --run-type="$1" \
		--wrap="exec $FT_RUN --workers=3 --srun -- $IT_JOBS_DIR/ft-job.sh worker $2"
}

# ft_worker_steps OUTFILE RUN: "index step" of each worker start line of restart count RUN (the
# job's output has a "run R worker T" line before each worker's start line).
ft_worker_steps() {
	awk -v run="$2" '$1 == "run" && $3 == "worker" { r = $2 }
		$1 == "worker" && $3 == "start" && r == run { print $2, $8 }' "$1"
}

# ft_worker_starts OUTFILE INDEX: how many times worker INDEX started (all runs).
ft_worker_starts() { grep -c "^worker $2 start " "$1"; }

# ft_running_steps JOBID: "stepid starttime" of the job's running srun steps (not batch/extern).
ft_running_steps() {
	squeue -h -s -j "$1" -o '%i %S' 2>/dev/null | awk -v j="$1." 'index($1, j) == 1 { s = substr($1, length(j) + 1); if (s ~ /^[0-9]+$/) print s, $2 }' | sort -n
}
