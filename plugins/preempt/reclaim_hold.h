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

/* Whether candidate runs only outside the nodes owner's hold keeps for it, while owner can use no
 * other node: its GPUs are asked per node and it cannot have more nodes or tasks than held nodes
 * (reclaim_hold.c cannot_spread). Such a job cannot free anything owner could use. Slurm asks
 * preemptable() about every job of its job list in each candidate search, and
 * detaches the owner's required nodes meanwhile; without this every waiting owner's search listed
 * all 2,048 running idle-time jobs of issue 14's scale (then sorted them and tried them one by one)
 * in every scheduling pass. */
bool idletime_hold_elsewhere(idletime_sched_t *sched, job_record_t *owner, job_record_t *candidate);
/* Frees what idletime_hold_elsewhere caches (plugin fini, under the plugin's mutex). */
void idletime_hold_fini(void);

#endif
