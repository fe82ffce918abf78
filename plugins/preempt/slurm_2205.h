/*
 * slurm_2205.h - Slurm 22.05 internals the slurmctld-side plugins use (adapter, included by
 * slurm_internal.h only). The preempt interface is in src/slurmctld/.
 */
#ifndef IDLETIME_SLURM_2205_H
#define IDLETIME_SLURM_2205_H

#include "src/slurmctld/preempt.h"

/* A job's details record: `struct job_details` here, job_details_t since 23.02. */
typedef struct job_details idletime_job_details_t;

#endif
