// Publishes the time of a job's newest durable checkpoint in its Slurm Comment (see publish.cpp).
#pragma once
#include <cstdint>
#include <string>

namespace idletime::ckpt {

// Sets "idletime:ckpt=<taken_at>" (unix seconds) in the Comment of Slurm job `job_id`, keeping
// the rest of the Comment. Only inside that job (SLURM_JOB_ID == job_id), at most once per 5 s,
// never with IDLETIME_CKPT_PUBLISH=0. Never throws; a failure is logged once to stderr.
void publish_checkpoint(const std::string &job_id, int64_t taken_at) noexcept;

}  // namespace idletime::ckpt
