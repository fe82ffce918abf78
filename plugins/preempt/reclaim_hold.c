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
 * StateSaveLocation, and `scontrol reconfigure` drops it. It is taken only where it cannot narrow
 * what the owner may use (may_hold) and never covers more nodes than the owner's minimum node
 * count (else Slurm would raise that count, or 24.11's job update would turn it into excluded
 * nodes). Every entry point runs where slurmctld holds the job write lock and no job other than
 * the one named is inside _get_req_features (which detaches a job's required nodes while it
 * collects candidates and restores them from a copy afterwards): the grace time query of
 * _preempt_jobs, the job queue sort (job_preempt_check) and the candidate search (preemptable(),
 * which skips its own preemptor).
 */
#include "plugins/preempt/reclaim_hold.h"

#include "src/common/bitstring.h"

/* Whether every node of bitmap may run the owner soon: up, not drained or draining, not failed.
 * Not avail_node_bitmap: Slurm also clears it for a node that missed one reply (NO_RESPOND, until
 * its next answer) or is powering up, and a loaded slurmd misses replies exactly while its victims
 * release; ending the hold then would hand their GPUs back to the queue. */
static bool nodes_usable(bitstr_t *bitmap)
{
	bitoff_t first = bit_ffs(bitmap), last = bit_fls(bitmap);

	if (!bit_super_set(bitmap, up_node_bitmap))
		return false;
	for (bitoff_t i = first; first >= 0 && i <= last && i < node_record_count; i++) {
		node_record_t *node = bit_test(bitmap, i) ? node_record_table_ptr[i] : NULL;
		if (node && (IS_NODE_DRAIN(node) || IS_NODE_FAIL(node)))
			return false;
	}
	return true;
}

/* Owners whose required nodes preempt/idletime may set: they name none themselves, run in one
 * partition, outside reservations and without node features, and the victim's nodes are usable
 * (nodes_usable), inside that partition and not excluded by the owner. */
static bool may_hold(job_record_t *owner, job_record_t *victim)
{
	idletime_job_details_t *d = owner->details;

	if (!d || d->req_nodes || d->features_use || owner->array_recs || owner->het_job_id ||
	    owner->part_ptr_list || owner->resv_ptr || !owner->part_ptr || !owner->part_ptr->node_bitmap ||
	    !victim->node_bitmap)
		return false;
	if (!bit_super_set(victim->node_bitmap, owner->part_ptr->node_bitmap) ||
	    !nodes_usable(victim->node_bitmap))
		return false;
	return !d->exc_node_bitmap || !bit_overlap_any(victim->node_bitmap, d->exc_node_bitmap);
}

/* Bumped whenever a hold begins, grows or ends: the held nodes cached by held_nodes are those of
 * this generation. */
static uint64_t hold_generation;

/* Ends job's hold: forgotten, and its required nodes given back (they are ours: no ReqNodeList). */
static void end_hold(idletime_sched_t *sched, job_record_t *job, const char *why)
{
	hold_generation++;
	(void) idletime_sched_hold_keep(sched, job->job_id, 0, 0, 0, 0);
	if (!job->details || job->details->req_nodes || !job->details->req_node_bitmap)
		return;
	FREE_NULL_BITMAP(job->details->req_node_bitmap);
	if (why)
		info("idletime/preempt: %pJ %s: its nodes are no longer held", job, why);
}

/* The hold joined by victim's nodes, or NULL when it would cover more than min_nodes. */
static bitstr_t *grown(job_record_t *owner, job_record_t *victim)
{
	bitstr_t *held = owner->details->req_node_bitmap;
	bitstr_t *u = held ? bit_copy(held) : bit_copy(victim->node_bitmap);

	if (held)
		bit_or(u, victim->node_bitmap);
	if (bit_set_count(u) > (int64_t) owner->details->min_nodes) {
		FREE_NULL_BITMAP(u);
		return NULL;
	}
	return u;
}

/* Leaves slurmctld's word on whom the victim was preempted for in its SystemComment, which only
 * slurmctld writes: idletime-ft-hook names the preemptor from it (two owners of different quotas
 * on one node made its own guess ambiguous). */
static void note_owner(job_record_t *victim, uint32_t owner_id, time_t now)
{
	char buf[1024];

	if (!idletime_sched_victim_note(victim->system_comment, owner_id, (int64_t) now, buf, sizeof(buf)))
		return;
	xfree(victim->system_comment);
	victim->system_comment = xstrdup(buf);
}

void idletime_hold_victim(idletime_sched_t *sched, job_record_t *victim, uint32_t grace, time_t now)
{
	uint32_t id = idletime_sched_victim_picked(sched, victim->job_id);
	job_record_t *owner = id ? find_job_record(id) : NULL;
	time_t until = now + grace + slurm_conf.kill_wait + slurm_conf.msg_timeout;
	bitstr_t *u;
	int rc;

	if (!owner || !IS_JOB_PENDING(owner))
		return;
	note_owner(victim, id, now);
	if (!may_hold(owner, victim) || !(u = grown(owner, victim))) {
		end_hold(sched, owner, idletime_sched_hold_keep(sched, id, 1, owner->restart_cnt, 1, now) ?
				       "has a victim its hold cannot cover" : NULL);
		return;
	}
	rc = idletime_sched_hold_begin(sched, id, owner->restart_cnt, until, victim->job_id);
	if (rc < 0 || (rc == 1 && owner->details->req_node_bitmap)) {
		/* Too many holds, or required nodes set elsewhere in slurmctld: not ours to change. */
		FREE_NULL_BITMAP(u);
		if (rc == 1)
			(void) idletime_sched_hold_keep(sched, id, 0, 0, 0, now);
		return;
	}
	FREE_NULL_BITMAP(owner->details->req_node_bitmap);
	owner->details->req_node_bitmap = u;
	hold_generation++;
	if (rc == 1)
		info("idletime/preempt: %pJ waits for its victims (%pJ first): their nodes (%s) are held for it until it starts, at most %ld s",
		     owner, victim, victim->nodes, (long) (until - now));
	else
		debug("idletime/preempt: %pJ also waits for %pJ on %s", owner, victim, victim->nodes);
}

/* Whether a victim of job_id's hold is still leaving: notified, running or completing. */
static bool victims_leaving(idletime_sched_t *sched, uint32_t job_id)
{
	static uint32_t ids[256];
	size_t n = idletime_sched_hold_victims(sched, job_id, ids, sizeof(ids) / sizeof(ids[0]));

	for (size_t i = 0; i < n; i++) {
		job_record_t *v = find_job_record(ids[i]);
		if (v && v->preempt_time && (IS_JOB_RUNNING(v) || IS_JOB_COMPLETING(v)))
			return true;
	}
	return false;
}

/* Whether a sweep already ran in this second with nothing changed that ends a hold at once: the
 * same scheduling pass (sdiag's cycle counters, bumped as each pass ends) and no node record
 * update since (last_node_update: a drain, a node down). Keyed on the second alone, a sweep made
 * at a submission (its candidate search) or at the previous pass's sort hid a node drained later
 * in that second: in stop 25's CI (Slurm 24.11, t-reclaim-many round (f)) the owner's submission,
 * the drain and the scancel fell within one second, every pass of that second (the scancel's, the
 * epilog's) kept the hold on the drained node, the owner was set aside as ReqNodeNotAvail, and no
 * later pass came before the next backfill cycle (30 s). */
static bool swept_already(time_t now)
{
	static time_t last, last_nodes;
	static uint64_t last_pass;
	uint64_t pass = ((uint64_t) slurmctld_diag_stats.schedule_cycle_counter << 32) |
			slurmctld_diag_stats.bf_cycle_counter;
	time_t nodes = last_node_update;

	if (now == last && pass == last_pass && nodes == last_nodes)
		return true;
	last = now;
	last_pass = pass;
	last_nodes = nodes;
	return false;
}

void idletime_hold_sweep(idletime_sched_t *sched, time_t now, uint32_t skip_id)
{
	static uint32_t ids[4096]; /* Holds::kMax: every hold is looked at */
	size_t n;

	if (swept_already(now))
		return;
	n = idletime_sched_hold_ids(sched, ids, sizeof(ids) / sizeof(ids[0]));
	for (size_t i = 0; i < n; i++) {
		job_record_t *job = find_job_record(ids[i]);
		bool pending = job && IS_JOB_PENDING(job);
		bool usable;

		if (ids[i] == skip_id)
			continue; /* inside _get_req_features: its required nodes are detached */
		if (!job) {
			hold_generation++;
			(void) idletime_sched_hold_keep(sched, ids[i], 0, 0, 0, now);
			continue;
		}
		/* A drained node stays up (up_node_bitmap) but will not run the owner: a victim whose
		 * step could not be killed drains its node ("Kill task failed"), and a hold kept while
		 * that victim still counts as leaving would pin the owner there for up to 600 s more. */
		usable = !job->details || !job->details->req_node_bitmap ||
			nodes_usable(job->details->req_node_bitmap);
		if (usable && idletime_sched_hold_keep(sched, ids[i], pending, job->restart_cnt,
						   pending && victims_leaving(sched, ids[i]), now))
			continue;
		end_hold(sched, job, !pending ? NULL : !usable ? "waits for a held node that is down, drained or failed" :
				     "still pends and none of its victims is leaving");
	}
}

/* The union of the nodes of owner's hold's victims, from their job records while they leave
 * (NULL once one is gone or runs again: its nodes are not known here). Computed once per owner and
 * hold generation (one candidate search asks about every running job); count: its node count. */
static bitstr_t *cached;
static uint32_t cached_owner;
static uint64_t cached_generation = UINT64_MAX;
static int64_t cached_count;

static bitstr_t *held_nodes(idletime_sched_t *sched, job_record_t *owner, int64_t *count)
{
	static uint32_t ids[256];
	size_t n;

	if (owner->job_id != cached_owner || hold_generation != cached_generation) {
		cached_owner = owner->job_id;
		cached_generation = hold_generation;
		FREE_NULL_BITMAP(cached);
		n = idletime_sched_hold_victims(sched, owner->job_id, ids, sizeof(ids) / sizeof(ids[0]));
		for (size_t i = 0; i < n; i++) {
			job_record_t *v = find_job_record(ids[i]);

			/* A victim requeued and started again elsewhere has other nodes now. */
			if (!v || !v->node_bitmap || (IS_JOB_RUNNING(v) && !v->preempt_time)) {
				FREE_NULL_BITMAP(cached);
				break;
			}
			if (cached)
				bit_or(cached, v->node_bitmap);
			else
				cached = bit_copy(v->node_bitmap);
		}
		cached_count = cached ? bit_set_count(cached) : 0;
	}
	*count = cached_count;
	return cached;
}

/* Whether owner can use no node beyond count required ones: its GPUs are asked per node (no
 * --gpus or --gpus-per-task, which Slurm may spread over more nodes) and it cannot have more
 * nodes (-N min-max equal) or has no more tasks than nodes (a task never spans nodes). A required
 * node must meet every per-node request itself, so another node adds nothing it could use. */
static bool cannot_spread(job_record_t *owner, int64_t count)
{
	idletime_job_details_t *d = owner->details;

	if (!d || count != (int64_t) d->min_nodes || owner->tres_per_job || owner->tres_per_task)
		return false;
	return d->max_nodes == d->min_nodes || d->num_tasks <= d->min_nodes;
}

bool idletime_hold_elsewhere(idletime_sched_t *sched, job_record_t *owner, job_record_t *candidate)
{
	int64_t count;
	bitstr_t *held = held_nodes(sched, owner, &count);

	return held && candidate->node_bitmap && cannot_spread(owner, count) &&
	       !bit_overlap_any(held, candidate->node_bitmap);
}

void idletime_hold_fini(void)
{
	FREE_NULL_BITMAP(cached);
	cached_generation = UINT64_MAX;
}
