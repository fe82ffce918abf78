// Thin libslurm access for the fault-tolerance hook and agent: copy a job into a plain
// snapshot, and the few job updates they need. Every function returns false with a one-line
// err (Slurm's own error text) on failure; none throws or blocks longer than one RPC.
#pragma once
#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

#include "ft/judge.hpp"

namespace idletime::slurmjob {

// Reads slurm.conf and loads libslurm's auth and hash plugins (slurm_init), once per process.
// Slurm 23.02 and later refuse every RPC before it ("No hash plugins loaded"); call it before
// the first function below, only where slurm.conf is reachable (slurmctld's epilog, a job).
void init();

struct Job {
    ft::JobSnapshot snap;
    uint32_t state = 0;       // raw job_state
    bool completing = false;  // JOB_COMPLETING flag (epilogs still running)
    bool pending = false;
    std::string nodes;
    int64_t begin_time = 0;   // expected start (Slurm's start_time of a pending job)
    int64_t eligible_time = 0;  // the job's BeginTime (details->begin_time)
    int64_t submit_time = 0;  // last submission; Slurm sets it to the requeue time on a requeue
    uint32_t user_id = 0;
    std::string exc_nodes;    // the job's excluded nodes (hostlist text), "" = none
    std::string partition;    // the partition the run used (a started job's own one comes first)
    bool array_meta = false;  // the pending record of a job array's unsplit tasks
    std::string system_comment;  // slurmctld's own (preempt/idletime's victim note)
};

// Loads the job; snap.nodes/required_nodes are filled (expanded), snap.failed_nodes is left
// to failed_nodes() (one more RPC). detail=false leaves out SHOW_DETAIL (per-node resource
// layout and the like: less packing under slurmctld's job read lock) for callers that read only
// the state, partition, times and nodes.
bool load(uint32_t job_id, Job &out, std::string &err, bool detail = true);
// Those of nodes that are down, failing, not responding or drained now.
bool failed_nodes(const std::vector<std::string> &nodes, std::vector<std::string> &out,
                  std::string &err);
// Sets the job's excluded nodes to its current ones plus add (pending jobs only).
bool exclude_nodes(uint32_t job_id, const std::string &current, const std::vector<std::string> &add,
                   std::string &err);
// True when the last failed call failed for a reason that a retry cannot fix (no such job,
// access denied, job finished): callers stop retrying then.
bool last_error_final();
// Host names of a Slurm hostlist ("a100-[1-2]" -> a100-1, a100-2).
std::vector<std::string> expand_hosts(const char *hosts);
void clear_error();
bool set_admin_comment(uint32_t job_id, const std::string &text, std::string &err);
// A finished job refuses slurm_update_job ("Job has already finished"): its final record is
// written into the accounting database instead (slurmdb_job_modify; sacct -o AdminComment).
// Waits for nothing: fails (retry later) until slurmdbd has the end of the run started at start.
bool set_accounting_admin_comment(uint32_t job_id, int64_t start, const std::string &text,
                                  std::string &err);
bool set_comment(uint32_t job_id, const std::string &text, std::string &err);
bool set_begin_time(uint32_t job_id, time_t t, std::string &err);
// An update of a job that changes no field: slurmctld accepts it and queues a scheduling pass
// (_slurm_rpc_update_job calls queue_job_scheduler after every successful update).
bool queue_pass(uint32_t pending_job_id, std::string &err);
// The credential lifetime slurmctld uses (AuthInfo cred_expire=, Slurm's default 120 s): Slurm
// 22.05 holds a requeued job until requeue + this + 1 s (BeginTime). false with err if unknown.
bool cred_expire_s(int &out, std::string &err);
bool requeue(uint32_t job_id, std::string &err);
// Every pending job (one slurm_load_jobs); fields as load() fills them.
bool pending_jobs(std::vector<Job> &out, std::string &err);
// A started (running or ended) job of a quota partition ("quota-<q>"): what a preempted run's hook needs to name
// the job that took its resources (hook/preemptor.hpp picks it).
struct StartedJob {
    uint32_t job_id = 0;
    int64_t start_time = 0;
    std::string quota;               // the partition name without "quota-"
    std::vector<std::string> nodes;  // expanded
};
// Every job of a quota partition (its own partition, the first of its list) that started (running
// or ended) at or after since (one slurm_load_jobs); other records are dropped before they are
// filled. hook::as_started_quota_job turns them into StartedJob.
bool started_quota_jobs(int64_t since, std::vector<Job> &out, std::string &err);
bool cancel(uint32_t job_id, std::string &err);

}  // namespace idletime::slurmjob
