// Naming the job that reclaimed a preempted run's resources, from one shared snapshot of the
// quota jobs that started recently (doc/security.md R2): every victim's hook used to load the
// whole job table every 2 s while it waited; now at most one hook a cluster does, once a
// second (kPreemptorSnapshotMs), and the others read its snapshot. No Slurm and no I/O here
// except snapshot_shared's file.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hook/slurm_job.hpp"

namespace idletime::hook {

// How old a shared snapshot of started quota jobs may be before a waiting hook loads it again.
constexpr int64_t kPreemptorSnapshotMs = 1000;

// job as a StartedJob when it is a job of a quota partition ("quota-<q>", its own partition)
// that started at or after since.
bool as_started_quota_job(const slurmjob::Job &job, int64_t since, slurmjob::StartedJob &out);

// One line per job: "<id> <start> <quota> <node>[,<node>...]". Decoding refuses the whole text
// on any malformed line (a damaged snapshot is reloaded, never half-read).
std::string started_jobs_encode(const std::vector<slurmjob::StartedJob> &jobs);
bool started_jobs_decode(const std::string &text, std::vector<slurmjob::StartedJob> &out);

// The job that preempted victim. With noted (the job slurmctld recorded picking it for, from
// its SystemComment: victim_note.hpp): that job once it has started, else false. Without: of jobs
// other than victim, the first that started at or after preempt_time (1 s resolution) on one of
// nodes (ambiguous when two owners started on one node); false when none has.
bool pick_preemptor(const std::vector<slurmjob::StartedJob> &jobs, uint32_t victim,
                    const std::vector<std::string> &nodes, int64_t preempt_time, uint32_t noted,
                    slurmjob::StartedJob &out);

// The snapshot in path if it is younger than max_age_ms, else produce()'s, stored there for the
// next caller (under flock: concurrent callers produce it once). A missing or unusable file
// (symlink, not owned by this user) is not fatal: produce() is called and err says why.
using ProduceFn = std::function<bool(std::string &text, std::string &err)>;
bool snapshot_shared(const std::string &path, int64_t max_age_ms, const ProduceFn &produce,
                     std::string &text, std::string &err);

}  // namespace idletime::hook
