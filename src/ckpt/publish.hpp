// Publishes the time of a job's newest durable checkpoint in its Slurm Comment (see publish.cpp).
#pragma once
#include <cstdint>
#include <string>

namespace idletime::ckpt {

// Sets "idletime:ckpt=<taken_at>" (unix seconds) in the Comment of Slurm job `job_id`, keeping
// the rest of the Comment. Only inside that job (SLURM_JOB_ID == job_id), at most once per 5 s,
// never with IDLETIME_CKPT_PUBLISH=0, nor in a run that is not preemptible (IDLETIME_PREEMPTIBLE=0,
// set by spank_idletime in quota partitions: preempt/idletime never looks at such a job). Never
// throws; a failure is logged once to stderr.
void publish_checkpoint(const std::string &job_id, int64_t taken_at) noexcept;

// What the job load of the last publish saw of job `id`: taken less than max_age_ms ago (steady
// clock), false otherwise. release() uses it instead of loading the job once more (one RPC fewer
// between a preempted job's save and its requeue, while slurmctld is busiest).
struct JobSeen {
    uint32_t state = 0;        // job_state, flags included
    int64_t preempt_time = 0;  // when Slurm picked the job as a victim; 0 = never
    int64_t end_time = 0;
};
bool recent_job_seen(uint32_t id, int64_t max_age_ms, JobSeen &out) noexcept;

// The job id publish_checkpoint would update, or 0, from the values of SLURM_JOB_ID,
// IDLETIME_CKPT_PUBLISH and IDLETIME_PREEMPTIBLE (nullptr = unset). Pure, for tests.
uint32_t publish_target(const std::string &job_id, const char *slurm_job_id, const char *publish,
                        const char *preemptible);

}  // namespace idletime::ckpt
