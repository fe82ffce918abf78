/*
 * preempt_api_2605.c - adapter: since Slurm 26.05 a preempt plugin answers one function per
 * value (preempt_p_get_mode, _get_prio, _get_grace_time); whether preemption is enabled is
 * slurmctld's own PreemptMode check.
 */
#include "plugins/preempt/preempt_api.h"

extern uint16_t preempt_p_get_mode(job_record_t *job_ptr)
{
	return idletime_preempt_mode(job_ptr);
}

extern uint32_t preempt_p_get_prio(job_record_t *job_ptr)
{
	return idletime_preempt_prio(job_ptr);
}

extern uint32_t preempt_p_get_grace_time(job_record_t *job_ptr)
{
	return idletime_preempt_grace(job_ptr);
}
