/*
 * preempt_api_2205.c - adapter: Slurm 22.05 to 25.11 ask a preempt plugin for its values
 * through one call, preempt_p_get_data(job, PREEMPT_DATA_*, out).
 */
#include "plugins/preempt/preempt_api.h"

extern int preempt_p_get_data(job_record_t *job_ptr, slurm_preempt_data_type_t data_type, void *data)
{
	switch (data_type) {
	case PREEMPT_DATA_ENABLED:
		*(bool *) data = slurm_conf.preempt_mode != PREEMPT_MODE_OFF;
		return SLURM_SUCCESS;
	case PREEMPT_DATA_MODE:
		*(uint16_t *) data = idletime_preempt_mode(job_ptr);
		return SLURM_SUCCESS;
	case PREEMPT_DATA_PRIO:
		*(uint32_t *) data = idletime_preempt_prio(job_ptr);
		return SLURM_SUCCESS;
	case PREEMPT_DATA_GRACE_TIME:
		*(uint32_t *) data = idletime_preempt_grace(job_ptr);
		return SLURM_SUCCESS;
	}
	error("idletime/preempt: unknown preempt data type %d", (int) data_type);
	return SLURM_ERROR;
}
