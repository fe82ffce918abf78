/*
 * preempt_idletime.c - preempt/idletime: who may preempt whom and in which order, decided by
 * the idletime policy (src/sched, include/idletime/sched.h). This file only translates Slurm's
 * records; it never blocks, never calls fatal() and does no I/O: the config is read at start and
 * by plugin_config.c's watcher thread, outside slurmctld's locks.
 *
 * Victim order reaches Slurm through the preempt priority (idletime_preempt_prio, handed to
 * Slurm by preempt_api_2205.c or preempt_api_2605.c): slurmctld asks preemptable() for every job
 * of one preemptor, then sorts the candidates by this value (lowest first), so we note the
 * candidates and hand out their rank in the policy's order.
 */
#include "plugins/preempt/slurm_internal.h"
#include "plugins/preempt/preempt_api.h"
#include "plugins/preempt/reclaim_hold.h"

#include <stdlib.h>

#include "src/common/bitstring.h"
#include "src/slurmctld/job_scheduler.h"

const char plugin_name[] = "idletime checkpoint-aware preemption";
const char plugin_type[] = "preempt/idletime";
const uint32_t plugin_version = IDLETIME_PLUGIN_VERSION;

static pthread_mutex_t sched_lock = PTHREAD_MUTEX_INITIALIZER;
static idletime_sched_t *sched;
static idletime_plugin_t plugin = {
	.lock = &sched_lock, .sched = &sched, .who = "idletime/preempt",
	.min_run_env = "IDLETIME_PREEMPT_MIN_RUN_TIME", .without = "deciding like preempt/partition_prio",
	.timed_call = "preemptable()",
};

extern int init(void)
{
	return idletime_plugin_init(&plugin);
}

extern void fini(void)
{
	slurm_mutex_lock(&sched_lock);
	idletime_hold_fini();
	slurm_mutex_unlock(&sched_lock);
	idletime_plugin_fini(&plugin);
}

/* Whether a job of partition a may ever preempt one of b (the policy's partition rule, as the job
 * views would carry it: idletime_job_view); caller holds sched_lock. */
static bool may_preempt_partition(part_record_t *a, part_record_t *b)
{
	return idletime_sched_partitions_may_preempt(sched, a->name, a->priority_tier, b->name, b->priority_tier,
						     b->preempt_mode == PREEMPT_MODE_OFF) == 1;
}

extern bool preempt_p_job_preempt_check(job_queue_rec_t *preemptor, job_queue_rec_t *preemptee)
{
	part_record_t *a = preemptor->part_ptr, *b = preemptee->part_ptr;
	bool rc;

	slurm_mutex_lock(&sched_lock);
	idletime_hold_sweep(sched, time(NULL), 0); /* the queue sort: job write lock, no job mid-select */
	rc = a && b && bit_overlap_any(a->node_bitmap, b->node_bitmap) && may_preempt_partition(a, b);
	slurm_mutex_unlock(&sched_lock);
	return rc;
}

/* A guaranteed job's first candidate, usually found at its submission, where slurmctld only tests:
 * ask for the main pass that picks its victims now rather than at slurmctld's next once-a-second
 * wake-up (doc/design/notice-and-release.md, section 10). schedule() only signals slurmctld's
 * scheduling thread (22.05 through 26.05): it takes no slurmctld lock, so it is safe under the job
 * write lock held here, and the pass starts once the caller lets go of it. */
static void request_pass(job_record_t *owner)
{
	schedule(false);
	debug("idletime/preempt: %pJ may reclaim GPUs lent to idle-time jobs: scheduling pass requested now", owner);
}

/* Slurm's spacing of passes queued by submissions: SchedulerParameters=batch_sched_delay (s,
 * default 3, as job_scheduler.c reads it); -1 with defer or defer_batch (no pass at submission).
 * Read again only after a reconfigure (slurm_conf.last_update); caller holds sched_lock. */
static int submit_pass_gap(void)
{
	static time_t seen;
	static int gap = 3;
	const char *p = slurm_conf.sched_params;
	char *d;

	if (seen && seen == slurm_conf.last_update)
		return gap;
	seen = slurm_conf.last_update;
	d = xstrcasestr(p, "batch_sched_delay=");
	gap = d ? atoi(d + 18) : 3;
	if (gap < 0)
		gap = 3;
	if (xstrcasestr(p, "defer"))
		gap = -1;
	return gap;
}

extern bool preempt_p_preemptable(job_record_t *preemptee, job_record_t *preemptor)
{
	idletime_sched_job_t a, b;
	time_t now = time(NULL);
	struct timespec t0;
	bool pass;
	int rc, gap;

	if (!preemptee->part_ptr || !preemptor->part_ptr || !IS_JOB_RUNNING(preemptee))
		return false;
	slurm_mutex_lock(&sched_lock); /* also guards the cached TRES position in job_view.c */
	idletime_hold_sweep(sched, now, preemptor->job_id);
	/* The policy's first rule, on the partitions alone: Slurm asks about every job of its job list
	 * for every pending job it tries, idle-time ones included (which preempt no job of a managed
	 * partition), and most answers need no job view. */
	if (!may_preempt_partition(preemptor->part_ptr, preemptee->part_ptr)) {
		slurm_mutex_unlock(&sched_lock);
		return false;
	}
	if (idletime_hold_elsewhere(sched, preemptor, preemptee)) {
		idletime_call_off_hold(&plugin);
		slurm_mutex_unlock(&sched_lock);
		return false;
	}
	idletime_call_begin(&t0);
	idletime_job_view(preemptor, NULL, &a, now, false);
	idletime_job_view(preemptee, NULL, &b, now, false);
	rc = idletime_sched_preemptable(sched, &a, &b, now);
	pass = rc == 1 && (gap = submit_pass_gap()) >= 0 && idletime_sched_pass_wanted(sched, (uint32_t) gap, now);
	idletime_call_end(&plugin, &t0);
	slurm_mutex_unlock(&sched_lock);
	if (pass)
		request_pass(preemptor);
	return rc == 1;
}

uint16_t idletime_preempt_mode(job_record_t *job_ptr)
{
	part_record_t *part = job_ptr->part_ptr;
	uint16_t mode = slurm_conf.preempt_mode;

	if (part && part->preempt_mode != NO_VAL16)
		mode = part->preempt_mode;
	return mode & ~PREEMPT_MODE_GANG; /* gang scheduling is not preemption */
}

uint32_t idletime_preempt_prio(job_record_t *job_ptr)
{
	uint32_t rank;

	/* The rank belongs to the candidates preemptable() just noted; a config swapped in by the
	 * watcher meanwhile keeps the noted candidates. */
	slurm_mutex_lock(&sched_lock);
	rank = idletime_sched_victim_rank(sched, job_ptr->job_id);
	slurm_mutex_unlock(&sched_lock);
	return rank;
}

uint32_t idletime_preempt_grace(job_record_t *job_ptr)
{
	uint32_t grace = job_ptr->part_ptr ? job_ptr->part_ptr->grace_time : 0;
	time_t now = time(NULL);

	/* Slurm asks once per victim, as it picks it (its grace time starts now), inside the
	 * preemptor's select_nodes: hold the victim's nodes for the preemptor (reclaim_hold.c). */
	slurm_mutex_lock(&sched_lock);
	idletime_hold_sweep(sched, now, 0);
	idletime_hold_victim(sched, job_ptr, grace, now);
	slurm_mutex_unlock(&sched_lock);
	return grace;
}
