/*
 * preempt_api.h - what preempt/idletime answers slurmctld besides preemptable(): the values
 * Slurm's preempt interface asks for. How it asks differs by release, so one adapter file per
 * interface generation hands these to Slurm: preempt_api_2205.c (22.05 to 25.11,
 * preempt_p_get_data) or preempt_api_2605.c (26.05 on, one function per value); configure
 * picks one (SLURM_PREEMPT_GET_DATA).
 */
#ifndef IDLETIME_PREEMPT_API_H
#define IDLETIME_PREEMPT_API_H

#include "plugins/preempt/slurm_internal.h"

/* PreemptMode of the job's partition (else the cluster's), without GANG. */
uint16_t idletime_preempt_mode(job_record_t *job_ptr);
/* The job's rank among the candidates preemptable() noted last (lowest goes first). */
uint32_t idletime_preempt_prio(job_record_t *job_ptr);
/* GraceTime of the job's partition, seconds. Slurm asks as it picks the job as a victim, so this
 * is also where preempt/idletime holds the victim's nodes for its preemptor (reclaim_hold.c). */
uint32_t idletime_preempt_grace(job_record_t *job_ptr);

#endif
