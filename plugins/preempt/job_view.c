/*
 * job_view.c - copy the few fields the policy needs out of Slurm's job record. O(1) apart from
 * a scan of the job's SPANK environment when the caller wants the --quota hint; no I/O, no
 * allocation.
 */
#include "plugins/preempt/slurm_internal.h"

#include <stdlib.h>
#include <string.h>

#define IDLETIME_DEFAULT_CONFIG "/etc/idletime/idletime.json"

const char *idletime_config_path(void)
{
	const char *p = getenv("IDLETIME_CONFIG");
	return (p && *p) ? p : IDLETIME_DEFAULT_CONFIG;
}

int idletime_gpu_tres_pos(time_t now)
{
	static int pos = -1;
	static time_t tried;

	/* The TRES list arrives from slurmdbd after start: retry now and then, not per call. */
	if (pos >= 0 || now - tried < 10)
		return pos;
	tried = now;
	slurmdb_tres_rec_t rec = { .type = "gres", .name = "gpu" };
	pos = assoc_mgr_find_tres_pos(&rec, false);
	if (pos >= slurmctld_tres_cnt)
		pos = -1;
	return pos;
}

static uint32_t job_gpus(job_record_t *job_ptr, time_t now)
{
	int pos = idletime_gpu_tres_pos(now);
	uint64_t *cnt = IS_JOB_PENDING(job_ptr) ? job_ptr->tres_req_cnt : job_ptr->tres_alloc_cnt;

	if (pos < 0 || !cnt)
		return 0;
	return cnt[pos] > UINT32_MAX ? UINT32_MAX : (uint32_t) cnt[pos];
}

static const char *spank_quota(job_record_t *job_ptr)
{
	static const char k1[] = "IDLETIME_QUOTA=", k2[] = "SPANK_IDLETIME_QUOTA=";

	for (uint32_t i = 0; job_ptr->spank_job_env && i < job_ptr->spank_job_env_size; i++) {
		const char *e = job_ptr->spank_job_env[i];
		if (!e)
			continue;
		if (!strncmp(e, k1, sizeof(k1) - 1))
			return e + sizeof(k1) - 1;
		if (!strncmp(e, k2, sizeof(k2) - 1))
			return e + sizeof(k2) - 1;
	}
	return NULL;
}

void idletime_job_view(job_record_t *job_ptr, part_record_t *part, idletime_sched_job_t *v, time_t now,
		       bool with_quota)
{
	if (!part)
		part = job_ptr->part_ptr;
	memset(v, 0, sizeof(*v));
	v->job_id = job_ptr->job_id;
	if (part) {
		v->partition = part->name;
		v->priority_tier = part->priority_tier;
		v->preempt_off = part->preempt_mode == PREEMPT_MODE_OFF;
	}
	v->partitions = IS_JOB_PENDING(job_ptr) ? job_ptr->partition : NULL;
	v->gpus = job_gpus(job_ptr, now);
	v->start_time = IS_JOB_PENDING(job_ptr) ? 0 : job_ptr->start_time;
	v->submit_time = job_ptr->details ? job_ptr->details->submit_time : 0;
	v->preempt_time = job_ptr->preempt_time;
	v->preempt_start = job_ptr->details ? job_ptr->details->preempt_start_time : 0;
	v->comment = job_ptr->comment;
	v->account = job_ptr->account;
	v->quota_hint = with_quota ? spank_quota(job_ptr) : NULL;
}
