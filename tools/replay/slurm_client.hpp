// The replay driver's only contact with Slurm: libslurm's public API (submit, load, cancel).
#pragma once
#include <cstdint>
#include <ctime>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace idletime::replay {

struct SubmitSpec {
    std::string name;        // job name (the trace pod name)
    std::string account;     // quota account
    std::string partition;   // empty: let job_submit/idletime route it
    std::string tres;        // per node, e.g. "gres:gpu:a100:2"
    uint32_t nodes = 1;      // gang of whole nodes (min = max = nodes)
    std::string script;      // batch script text
    std::string workdir, output;
    std::vector<std::string> env;        // NAME=value
    std::vector<std::string> spank_env;  // job control env, as the SPANK plugin would set it
    bool notice_to_batch = false;        // --signal=B:USR1 (notice at preemption selection)
    uint32_t time_limit_min = 60;
    bool held = false;                   // priority 0: never started until released
};

// What one poll saw of one job.
struct JobView {
    uint32_t id = 0;
    uint32_t base = 0;        // JOB_STATE_BASE part of job_state
    bool completing = false;  // JOB_COMPLETING flag
    bool requeue = false;     // JOB_REQUEUE / JOB_REQUEUE_FED flags: it will be pending again
    uint32_t restarts = 0;    // restart_cnt
    time_t start = 0, end = 0, preempt = 0;
    std::string partition;    // the one it runs in (first of the list)
};

struct SlurmError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// slurm_init() once per process, after SLURM_CONF points at an existing file.
void slurm_client_init(const std::string &slurm_conf);
void slurm_client_fini();

uint32_t submit_job(const SubmitSpec &spec);  // throws SlurmError with Slurm's reason
// Views of the jobs in `ids` (others are skipped). Throws SlurmError.
std::vector<JobView> load_jobs(const std::set<uint32_t> &ids);
// Jobs not in `ids` that are pending or running (another user's work on the cluster).
int foreign_active_jobs(const std::set<uint32_t> &ids);
void cancel_job(uint32_t id);  // best effort
// Pending or running replay jobs of this user into dir (absolute): work dir dir/A..D, output
// under its out/. Throws SlurmError.
std::vector<uint32_t> own_jobs_under(const std::string &dir);
bool is_replay_job(const std::string &dir, const std::string &work_dir, const std::string &std_out);

// The running slurmctld's plugin choices (slurm_load_ctl_conf), to prove a configuration is live.
struct CtldPlugins {
    // 22.05 does not send PrioritySiteFactorPlugin in this RPC: PriorityType stands in for it.
    std::string preempt_type, priority_type, job_submit;  // "" when unset
};
CtldPlugins load_ctld_plugins();  // throws SlurmError
// Main scheduling cycles slurmctld has run since it started (sdiag's "Total cycles"): 0 until its
// first pass, which comes about 3 s after a restart whatever is submitted meanwhile. Throws SlurmError.
uint32_t schedule_cycles();

bool job_state_active(const JobView &v);   // pending, running or completing
bool job_state_running(const JobView &v);
bool job_state_completed(const JobView &v);
bool job_state_failed(const JobView &v);  // failed/cancelled/timeout/...: will not run again
const char *job_state_name(const JobView &v);

}  // namespace idletime::replay
