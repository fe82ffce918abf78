/*
 * slurm_api.h - the differences of Slurm's public C API (slurm/slurm.h) between the supported
 * releases, for idletime's tools and libraries. The only place outside the controller adapters
 * (plugins/preempt/slurm_2205.h, slurm_2411.h) that looks at SLURM_VERSION_NUMBER.
 *   22.05: hostlist_t and List are pointer typedefs; slurm_get_errno() reads libslurm's error.
 *   24.11: hostlist_t is the struct (hostlist_t *), List is list_t *, ListIterator list_itr_t *;
 *          slurm_get_errno() is gone and libslurm reports through errno.
 */
#ifndef IDLETIME_COMPAT_SLURM_API_H
#define IDLETIME_COMPAT_SLURM_API_H

#include <errno.h>
#include <slurm/slurm.h>

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(24, 11, 0)
typedef hostlist_t *idletime_hostlist_t;
typedef list_t *idletime_list_t;
typedef list_itr_t *idletime_list_itr_t;
static inline int idletime_slurm_errno(void) { return errno; }
#else
typedef hostlist_t idletime_hostlist_t;
typedef List idletime_list_t;
typedef ListIterator idletime_list_itr_t;
static inline int idletime_slurm_errno(void) { return slurm_get_errno(); }
#endif

#endif
