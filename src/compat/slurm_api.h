/*
 * slurm_api.h - the differences of Slurm's public C API (slurm/slurm.h) between the supported
 * releases, for idletime's tools and libraries. The only place outside the controller adapters
 * (plugins/preempt/slurm_2205.h, slurm_2411.h) that looks at SLURM_VERSION_NUMBER.
 *   22.05: hostlist_t and List are pointer typedefs; slurm_get_errno() reads libslurm's error.
 *   24.11: hostlist_t is the struct (hostlist_t *), List is list_t *, ListIterator list_itr_t *;
 *          slurm_get_errno() is gone and libslurm reports through errno.
 *   26.05: a job is named by a slurm_step_id_t (job_descriptor.step_id, submit_response_msg.step_id,
 *          slurm_load_job/slurm_requeue/slurm_kill_job take one; slurm.h's uint32_t wrappers are C11
 *          _Generic, not C++), and slurm_free_ctl_conf() is slurm_free_conf().
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

/* slurm_get_statistics()'s reply (sdiag): libslurm exports its free function in every supported
 * release, but slurm.h does not declare it. */
#ifdef __cplusplus
extern "C"
#endif
void slurm_free_stats_response_msg(stats_info_response_msg_t *msg);
static inline void idletime_free_stats(stats_info_response_msg_t *m) { slurm_free_stats_response_msg(m); }

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0)
static inline slurm_step_id_t idletime_job_step_id(uint32_t job_id)
{
	slurm_step_id_t s;
	s.sluid = 0;
	s.job_id = job_id;
	s.step_het_comp = NO_VAL;
	s.step_id = NO_VAL;
	return s;
}
static inline int idletime_load_job(job_info_msg_t **resp, uint32_t job_id, uint16_t show_flags)
{ return slurm_load_job(resp, idletime_job_step_id(job_id), show_flags); }
static inline int idletime_requeue(uint32_t job_id, uint32_t flags)
{ return slurm_requeue(idletime_job_step_id(job_id), flags); }
static inline int idletime_kill_job(uint32_t job_id, uint16_t signal, uint16_t flags)
{ return slurm_kill_job(idletime_job_step_id(job_id), signal, flags); }
static inline void idletime_desc_set_job_id(job_desc_msg_t *d, uint32_t job_id) { d->step_id.job_id = job_id; }
static inline uint32_t idletime_desc_job_id(const job_desc_msg_t *d) { return d->step_id.job_id; }
static inline uint32_t idletime_submit_job_id(const submit_response_msg_t *r) { return r->step_id.job_id; }
static inline void idletime_free_ctl_conf(slurm_conf_t *c) { slurm_free_conf(c); }
#else
static inline int idletime_load_job(job_info_msg_t **resp, uint32_t job_id, uint16_t show_flags)
{ return slurm_load_job(resp, job_id, show_flags); }
static inline int idletime_requeue(uint32_t job_id, uint32_t flags) { return slurm_requeue(job_id, flags); }
static inline int idletime_kill_job(uint32_t job_id, uint16_t signal, uint16_t flags)
{ return slurm_kill_job(job_id, signal, flags); }
static inline void idletime_desc_set_job_id(job_desc_msg_t *d, uint32_t job_id) { d->job_id = job_id; }
static inline uint32_t idletime_desc_job_id(const job_desc_msg_t *d) { return d->job_id; }
static inline uint32_t idletime_submit_job_id(const submit_response_msg_t *r) { return r->job_id; }
static inline void idletime_free_ctl_conf(slurm_conf_t *c) { slurm_free_ctl_conf(c); }
#endif

#endif
