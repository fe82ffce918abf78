// Runs one job stream through the live cluster under one configuration and records it.
#pragma once
#include "replay/metrics.hpp"

#include <iosfwd>
#include <string>

namespace idletime::replay {

// The configurations compared by `idletime-replay run`.
struct ConfigPlan {
    char letter = 'A';          // A: no borrowing, B: plain Slurm scavenger, C: idletime, D: C + scheduling plugins
    const char *title = "";
    bool plugins = false;       // cluster started with the idletime plugins
    bool idle_partitions = false;  // idle-time jobs go to idle-<pool> (else their quota partition)
    bool ckpt_worker = false;   // jobs checkpoint and release on the notice
    // slurm.conf lines appended after the rendered config (later keys win), or nullptr.
    const char *slurm_extra = nullptr;
    // A plugin this configuration needs under <prefix>/lib/idletime/slurm, or nullptr.
    const char *needs_plugin = nullptr;
    // What the running slurmctld must report (checked before the first job is submitted).
    const char *preempt_type = "preempt/partition_prio";
    const char *priority_type = "priority/basic";
};

const ConfigPlan &config_plan(char letter);  // throws std::invalid_argument

struct RunSetup {
    std::string out_dir;        // this configuration's directory (logs/, ckpt/, out/ inside)
    std::string worker;         // path of idletime-replay-job
    std::string slurm_conf;
    std::string munge_socket;
    bool route_by_plugin = true;  // C: leave the partition to job_submit/idletime
    double poll_s = 0.5;
    double timeout_s = 900;     // per configuration, from the first submission
    double ckpt_every_s = 10;
    uint32_t grace_time_s = 30;
};

// Submits every job at its offset, polls until all ended (or timeout, then cancels the rest),
// merges the workers' logs, and returns the event log. Throws on Slurm errors.
EventLog run_config(const JobStream &js, const ConfigPlan &plan, const RunSetup &setup,
                    std::ostream &progress);

}  // namespace idletime::replay
