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
