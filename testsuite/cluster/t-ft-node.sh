#!/bin/bash
# Node failure: the node of a running job is set DOWN (scontrol update state=down), Slurm requeues
# the job (NODE_FAIL). idletime-ft-hook must count it as a node failure, not a failure restart
# (--max-restarts=0 still lets it run again: AdminComment "f":0,..."n":1), add the failed node to
# the job's ExcNodeList, and the job must complete on another node.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=ft-lib.sh
. "$IC_SRC/ft-lib.sh"
it_begin
ft_require_hook
DOWN=
trap '[ -z "$DOWN" ] || scontrol update nodename="$DOWN" state=resume 2>/dev/null; it_cleanup_jobs' EXIT
id=$(it_submit alice -J ft-node -p quota-team-a -t 5 --max-restarts=0 "$IT_JOBS_DIR/ft-job.sh" sleep 20) ||
	it_fail "sbatch"
it_wait_state "$id" RUNNING 60 || it_fail "job $id never ran"
node=$(it_job_field "$id" NodeList)
DOWN=$node
t0=$(date +%s)
scontrol update nodename="$node" state=down reason=idletime-ft-test || it_fail "cannot set $node down"
it_wait_field "$id" ExcNodeList "$node" 30 || it_fail "failed node $node not excluded (AdminComment $(ft_admin "$id"))"
it_assert_eq 1 "$(it_job_field "$id" Restarts)" "Restarts of $id after the node failure"
[[ $(ft_admin "$id") == *'"f":0,"n":1,'* ]] || it_fail "counters after the node failure: $(ft_admin "$id")"
it_release_requeue_delay "$id" || it_fail "cannot release the requeue delay of $id"
it_wait_state "$id" RUNNING 60 || it_fail "job $id did not run again (Reason=$(it_job_field "$id" Reason))"
again=$(it_job_field "$id" NodeList)
[ "$again" != "$node" ] || it_fail "job $id ran again on the failed node $node"
ft_wait_final "$id" 90 || it_fail "job $id did not finish"
it_assert_eq COMPLETED "$(it_job_field "$id" JobState)" "state of $id"
ft_acct_has "$id" '"f":0,"n":1,' || it_fail "final counters of $id: $(ft_acct "$id")"
it_info "job $id: node $node down -> requeued, excluded, completed on $again ($(($(date +%s) - t0)) s)"
it_pass
