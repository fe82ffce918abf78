/*
 * reclaim_hold.h - preempt/idletime holds the nodes of a guaranteed job's victims for it while
 * they leave (reclaim_hold.c). Both calls need the plugin's mutex and slurmctld's job write lock.
 */
#ifndef IDLETIME_RECLAIM_HOLD_H
#define IDLETIME_RECLAIM_HOLD_H

#include "plugins/preempt/slurm_internal.h"

/* Slurm picked victim for the preemptor whose candidates were noted last; its grace time
 * (grace s) starts now. Holds the victim's nodes for that preemptor when it is a guaranteed job. */
void idletime_hold_victim(idletime_sched_t *sched, job_record_t *victim, uint32_t grace, time_t now);
/* Ends holds whose job started, left, was requeued, waits for a down node, or passed its deadline
 * with no victim still leaving (once a second, and again after a new pass or a node update).
 * skip_id: the preemptor whose candidates Slurm is collecting (its required nodes are detached). */
void idletime_hold_sweep(idletime_sched_t *sched, time_t now, uint32_t skip_id);

/* Whether owner's hold keeps candidate out of its candidate search: candidate is not one of the
 * hold's victims (a job off the held nodes, or another job on them) while owner can use no node
 * beyond the held ones (its GPUs asked per node and no more nodes or tasks than held nodes:
 * reclaim_hold.c cannot_spread). The victims were picked as enough for owner and hold their GPUs
 * for it; another job frees nothing owner could use before they leave. Slurm asks preemptable()
 * about every running job of the owner's partition in each candidate search (owner's required
 * nodes detached meanwhile), sorts those it may preempt and tries them in select/cons_tres:
 * without this every waiting owner's search listed all 2,048 running idle-time jobs of issue
 * 14's scale in every scheduling pass. Once a victim is gone (its nodes unknown) or the hold ends,
 * owner's search is Slurm's again, so owner can pick more victims if those fell short. */
bool idletime_hold_excludes(idletime_sched_t *sched, job_record_t *owner, job_record_t *candidate);
/* Frees what idletime_hold_excludes caches (plugin fini, under the plugin's mutex). */
void idletime_hold_fini(void);
#endif
