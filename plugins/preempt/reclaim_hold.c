/*
 * reclaim_hold.c - while a guaranteed job waits for its victims to leave, preempt/idletime makes
 * their nodes its required nodes (issue 14; doc/design/notice-and-release.md, section 8; the
 * bookkeeping is src/sched/holds.cpp).
 *
 * Why: Slurm's main pass sets aside the whole partition of a job that waits for preempted jobs
 * (fail_by_part), so one owner per pool is looked at per pass and N owners reclaim one after the
 * other. For a pending job whose required nodes cover its node count it sets aside only those
 * nodes: the next owner picks its own victims in the same pass, and no queued idle-time job is
 * started on the GPUs the victims free.
 *
 * The hold lives in memory only: details->req_nodes (ReqNodeList) stays NULL, so nothing reaches
 * StateSaveLocation, `scontrol reconfigure` drops it, and a job with its own ReqNodeList is never
 * touched. Both entry points run where slurmctld holds the job write lock and no job is inside
 * _get_req_features (which detaches the required nodes while it collects candidates): the grace
 * time query of _preempt_jobs and the job queue sort (job_preempt_check).
 */
#include "plugins/preempt/reclaim_hold.h"

#include "src/common/bitstring.h"

#define SWEEP_MAX 256 /* holds looked at per sweep; more wait for the next second */

/* Required nodes preempt/idletime may set and free: the job names none of its own. */
static bool ours_to_set(job_record_t *job)
{
	return job->details && !job->details->req_nodes;
}

void idletime_hold_victim(idletime_sched_t *sched, job_record_t *victim, uint32_t grace, time_t now)
{
	uint32_t id = idletime_sched_victim_picked(sched, victim->job_id);
	job_record_t *owner;
	time_t until;
	int rc;

	if (!id || !victim->node_bitmap)
		return;
	owner = find_job_record(id);
	if (!owner || !IS_JOB_PENDING(owner) || !ours_to_set(owner) || owner->array_recs || owner->het_job_id)
		return;
	until = now + grace + slurm_conf.kill_wait + slurm_conf.msg_timeout;
	rc = idletime_sched_hold_begin(sched, id, owner->restart_cnt, until);
	if (rc < 0)
		return;
	if (rc == 1 && owner->details->req_node_bitmap) {
		/* Required nodes set elsewhere in slurmctld: not ours to change. */
		(void) idletime_sched_hold_keep(sched, id, 0, 0, now);
		return;
	}
	if (owner->details->req_node_bitmap)
		bit_or(owner->details->req_node_bitmap, victim->node_bitmap);
	else
		owner->details->req_node_bitmap = bit_copy(victim->node_bitmap);
	if (rc == 1)
		info("idletime/preempt: %pJ waits for its victims (%pJ first): their nodes (%s) are held for it until it starts, at most %ld s",
		     owner, victim, victim->nodes, (long) (until - now));
	else
		debug("idletime/preempt: %pJ also waits for %pJ on %s", owner, victim, victim->nodes);
}

void idletime_hold_sweep(idletime_sched_t *sched, time_t now)
{
	static time_t last;
	uint32_t ids[SWEEP_MAX];
	size_t n;

	if (now == last)
		return;
	last = now;
	n = idletime_sched_hold_ids(sched, ids, SWEEP_MAX);
	for (size_t i = 0; i < n; i++) {
		job_record_t *job = find_job_record(ids[i]);
		bool pending = job && IS_JOB_PENDING(job);

		if (idletime_sched_hold_keep(sched, ids[i], pending, job ? job->restart_cnt : 0, now))
			continue;
		if (!job || !ours_to_set(job) || !job->details->req_node_bitmap)
			continue;
		FREE_NULL_BITMAP(job->details->req_node_bitmap);
		if (pending)
			info("idletime/preempt: %pJ still waits after its hold's deadline: its nodes are no longer held", job);
		else
			debug("idletime/preempt: %pJ no longer pends: hold on its nodes ended", job);
	}
}
