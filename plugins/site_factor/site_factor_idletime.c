/*
 * site_factor_idletime.c - site_factor/idletime: pending idle-time jobs of quotas that borrow
 * fewer GPUs (relative to their guaranteed size) go first, older submissions break ties.
 * Guaranteed jobs and jobs outside idletime's partitions keep Slurm's neutral site factor.
 *
 * priority/multifactor calls set() for one job (at submission and requeue) and update() for all
 * jobs every PriorityCalcPeriod, both under the job write lock, so walking job_list is safe.
 * The borrowing snapshot is one pass over job_list, taken at most once per second.
 */
#include "plugins/preempt/slurm_internal.h"

#include <stdlib.h>

const char plugin_name[] = "idletime fair borrowing site factor";
const char plugin_type[] = "site_factor/idletime";
const uint32_t plugin_version = IDLETIME_PLUGIN_VERSION;

static pthread_mutex_t sched_lock = PTHREAD_MUTEX_INITIALIZER;
static idletime_sched_t *sched;

static idletime_plugin_t plugin = {
	.lock = &sched_lock, .sched = &sched, .who = "idletime/site_factor",
	.without = "site factors left unchanged",
};

extern int init(void)
{
	return idletime_plugin_init(&plugin);
}

extern void fini(void)
{
	idletime_plugin_fini(&plugin);
}

/* Called after `scontrol reconfigure`: the watcher thread rereads the config (no I/O here). */
extern void site_factor_p_reconfig(void)
{
	idletime_plugin_kick(&plugin);
}

static int add_running(void *x, void *arg)
{
	job_record_t *job_ptr = x;
	idletime_sched_job_t v;

	if (IS_JOB_RUNNING(job_ptr) || IS_JOB_SUSPENDED(job_ptr)) {
		idletime_job_view(job_ptr, NULL, &v, *(time_t *) arg, true);
		idletime_sched_borrow_add(sched, &v);
	}
	return 0;
}

/* Under sched_lock and the job write lock. */
static void snapshot(time_t now, bool force)
{
	if (!force && idletime_sched_borrow_taken_at(sched) >= 0 && now - idletime_sched_borrow_taken_at(sched) < 1)
		return;
	idletime_sched_borrow_reset(sched, now);
	if (job_list)
		list_for_each(job_list, add_running, &now);
}

static void set_one(job_record_t *job_ptr, time_t now)
{
	idletime_sched_job_t v;
	uint32_t factor;

	if (!IS_JOB_PENDING(job_ptr))
		return;
	idletime_job_view(job_ptr, NULL, &v, now, true);
	if (idletime_sched_site_factor(sched, &v, now, &factor) == 1)
		job_ptr->site_factor = NICE_OFFSET + factor;
}

extern void site_factor_p_set(job_record_t *job_ptr)
{
	time_t now = time(NULL);

	slurm_mutex_lock(&sched_lock);
	if (sched && idletime_sched_has_config(sched)) {
		snapshot(now, false);
		set_one(job_ptr, now);
	}
	slurm_mutex_unlock(&sched_lock);
}

static int update_one(void *x, void *arg)
{
	set_one(x, *(time_t *) arg);
	return 0;
}

extern void site_factor_p_update(void)
{
	time_t now = time(NULL);

	slurm_mutex_lock(&sched_lock);
	if (sched && idletime_sched_has_config(sched) && job_list) {
		snapshot(now, true);
		list_for_each(job_list, update_one, &now);
	}
	slurm_mutex_unlock(&sched_lock);
}
