// Thin libslurm access for the fault-tolerance hook and agent: copy a job into a plain
// snapshot, and the few job updates they need. Every function returns false with a one-line
// err (Slurm's own error text) on failure; none throws or blocks longer than one RPC.
#pragma once
#include <cstdint>
#include <ctime>
#include <string>

#include "ft/judge.hpp"

namespace idletime::slurmjob {

struct Job {
    ft::JobSnapshot snap;
    uint32_t state = 0;       // raw job_state
    bool completing = false;  // JOB_COMPLETING flag (epilogs still running)
    bool pending = false;
    std::string nodes;
    int64_t begin_time = 0;
    uint32_t user_id = 0;
};

bool load(uint32_t job_id, Job &out, std::string &err);
bool set_admin_comment(uint32_t job_id, const std::string &text, std::string &err);
// A finished job refuses slurm_update_job ("Job has already finished"): its final record is
// written into the accounting database instead (slurmdb_job_modify; sacct -o AdminComment).
bool set_accounting_admin_comment(uint32_t job_id, const std::string &text, std::string &err);
bool set_comment(uint32_t job_id, const std::string &text, std::string &err);
bool set_begin_time(uint32_t job_id, time_t t, std::string &err);
bool requeue(uint32_t job_id, std::string &err);
bool cancel(uint32_t job_id, std::string &err);

}  // namespace idletime::slurmjob
