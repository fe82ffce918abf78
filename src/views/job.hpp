// Job view: what `idletime jobs` shows for one job, derived by pure functions from a plain
// snapshot of the job (copied from libslurm's job_info_t by tools/views/) plus the config.
// No Slurm types, no I/O; time is passed in (epoch seconds).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "ft/ft.hpp"

namespace idletime::views {

// Base job state as Slurm reports it (same order as Slurm's enum job_states).
enum class SlurmState { Pending, Running, Suspended, Complete, Cancelled, Failed, Timeout, NodeFail,
                        Preempted, BootFail, Deadline, OutOfMemory, Other };

struct JobInfo {
    uint32_t job_id = 0;
    std::string name, user, account, qos;
    uint32_t uid = 0;
    SlurmState state = SlurmState::Other;
    bool completing = false;
    std::vector<std::string> partitions;  // as Slurm lists them; a started job's partition is first
    std::string nodes;                    // allocated hostlist ("" when not running)
    uint32_t gpus = 0;                    // allocated GPUs when running, else requested
    uint32_t cpus = 0;                    // allocated CPUs when running, else requested
    uint32_t restart_cnt = 0;             // Slurm's count (preemptions and failures mixed)
    int64_t submit_time = 0, start_time = 0, end_time = 0;
    int64_t eligible_time = 0;            // pending: BeginTime / EligibleTime
    int64_t preempt_time = 0;             // 0 = never picked as a preemption victim
    int wait_status = 0;                  // job_info_t.exit_code (wait(2) status)
    std::string state_reason;             // Slurm's reason text for pending/failed jobs
    std::string admin_comment;            // the fault-tolerance record (ft::kStatePrefix...)
    std::string comment;                  // may carry "idletime:ckpt=<t>" (newest checkpoint)
};

enum class Status { Queuing, Running, ResourcePreempted, Restarting, Succeeded, Failed, Stopped };
const char *status_name(Status s);                       // "Resource Preempted"
bool status_parse(const std::string &text, Status &out); // names, or lower-case-dashed keys
const char *status_key(Status s);                        // "resource-preempted" (JSON, --state)

enum class Resources { None, InQuota, NotInQuota, Other };  // Other: not an idletime partition
const char *resources_name(Resources r);                 // "In Quota", "Not in Quota", ""
const char *resources_key(Resources r);                  // "in-quota", "not-in-quota", "none", "other"

// Everything the view derives for one job.
struct JobView {
    const JobInfo *job = nullptr;
    std::string quota;       // "" when the job is not an idletime job
    std::string tenant;
    std::string mode;        // requested none|acceptable|only (the record job_submit stamped,
                             // else derived from the partitions), "" when unknown
    Status status = Status::Queuing;
    std::string reason;      // Failed: why; Stopped/Restarting/Resource Preempted: detail
    Resources resources = Resources::None;
    std::string pool;        // pool the job runs in, "" when not running
    uint32_t preemptions = 0, failures = 0;  // failures include time_limits
    uint32_t time_limits = 0;                // requeues at the time limit
    bool ft_record = false;  // counters come from the fault-tolerance record
    std::string nodes;       // nodes as shown to the viewer (may be the placeholder)
    int64_t age_s = 0;       // now - submit_time
};

constexpr const char *kHiddenNodes = "(shared)";

// Lookup tables built once per config (the job list derives 10,000s of jobs per call).
class Catalog {
public:
    explicit Catalog(const Config &cfg);
    const Config &config() const { return cfg_; }
    // Which quota and mode a partition list stands for: the quota of the job's account whose
    // resolution (core resolve()) gives exactly this set of partitions; else (Slurm prunes the
    // list, e.g. for -w or after the job ended) the only quota of the account whose partitions
    // include every listed one, the mode then following from the kinds listed. False otherwise.
    bool quota_mode(const std::string &account, const std::vector<std::string> &partitions,
                    std::string &quota, std::string &mode) const;
    // quota-<q> -> InQuota, idle-<pool> -> NotInQuota (pool set), anything else Other.
    Resources partition_kind(const std::string &partition, std::string &pool) const;

private:
    const Config &cfg_;
    std::map<std::string, std::pair<std::string, std::string>> by_key_;  // account|sorted parts
    std::map<std::string, std::pair<Resources, std::string>> parts_;
    std::multimap<std::string, std::pair<std::string, std::vector<std::string>>> reach_;  // account -> quota, parts
};

// operator_view: the viewer may see node names of jobs on shared idle capacity.
JobView derive(const Catalog &cat, const JobInfo &j, int64_t now, bool operator_view);

// "gres/gpu=4" (or "gres/gpu:a100=4" when only typed entries exist) and "cpu=8" out of a TRES
// string like "cpu=8,mem=16G,node=1,billing=8,gres/gpu=4,gres/gpu:a100=4". 0 when absent.
uint32_t tres_count(const std::string &tres, const std::string &name);
uint32_t tres_gpus(const std::string &tres);

// The fault-tolerance record to show: `accounting` (the newest accounting record's AdminComment,
// where the hook stores the final record of an ended job) when it parses and judged a later run
// than `live` (slurmctld's AdminComment, stale once the job ended), else `live`.
const std::string &newest_record(const std::string &live, const std::string &accounting);

// Newest durable checkpoint a job published in its Comment ("idletime:ckpt=<unix time>",
// src/ckpt/publish.cpp); 0 when there is none or the token is malformed.
int64_t published_checkpoint(const std::string &comment);

// "3d04h", "2h05m", "4m10s", "12s".
std::string format_age(int64_t seconds);

}  // namespace idletime::views
