/*
 * slurm_2205.h - Slurm 22.05 internals the slurmctld-side plugins use (adapter, included by
 * slurm_internal.h only). The preempt interface is in src/slurmctld/.
 */
#ifndef IDLETIME_SLURM_2205_H
#define IDLETIME_SLURM_2205_H

#include "src/slurmctld/preempt.h"

#endif
