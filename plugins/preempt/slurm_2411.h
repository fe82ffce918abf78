/*
 * slurm_2411.h - Slurm 24.11 and later internals the slurmctld-side plugins use (adapter,
 * included by slurm_internal.h only). Since 23.02 the preempt interface is in src/interfaces/,
 * and job and partition records are in src/common/ (slurmctld.h includes them).
 */
#ifndef IDLETIME_SLURM_2411_H
#define IDLETIME_SLURM_2411_H

#include "src/interfaces/preempt.h"

/* A job's details record (`struct job_details` in 22.05). */
typedef job_details_t idletime_job_details_t;

#endif
