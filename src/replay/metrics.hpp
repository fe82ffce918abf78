// Metrics of one replay run, computed from its recorded event log (pure; the driver
// records, this file only counts). Times are replay seconds from the first submission.
#pragma once
#include "replay/mapping.hpp"

#include <map>
#include <string>
#include <vector>

namespace idletime::replay {

// One run of a job: from a start to the end of that allocation.
struct JobRun {
    double start_s = 0;
    double end_s = 0;
    std::string partition;
    bool in_quota = false;    // ran in a quota partition (guaranteed, never preemptible)
    bool preempted = false;   // the run ended by preemption, the job was requeued
    double notice_s = -1;     // preemption notice time, -1 = none
    double work_done_s = 0;   // progress made in this run, seconds of work
    double work_kept_s = 0;   // part of it saved in a checkpoint (survives the preemption)
};

struct JobRecord {
    ReplayJob job;
    bool submitted = false;
    bool completed = false;   // finished all its work (last run not preempted)
    std::vector<JobRun> runs;
};

// What the poller saw at one instant: GPUs of running jobs per quota partition / pool.
struct Sample {
    double t = 0;
    std::map<std::string, int> quota_gpus;  // guaranteed use per quota
    std::map<std::string, int> pool_gpus;   // all allocated GPUs per pool
};

struct EventLog {
    std::vector<JobRecord> jobs;
    std::vector<Sample> samples;
    std::vector<Quota> quotas;
    std::map<std::string, int> pool_capacity;  // GPUs per pool
    double span_s = 0;                         // length of the submission window
};

struct Dist {
    int n = 0;
    double p50 = 0, p95 = 0, max = 0, mean = 0;
};

// Nearest-rank percentiles; n == 0 gives all zeros.
Dist distribution(std::vector<double> values);

struct Metrics {
    double alloc_rate_window = 0;  // mean allocated/capacity over [0, span_s]
    double alloc_rate_run = 0;     // same over [0, makespan]
    double makespan_s = 0;         // last run end
    std::vector<std::pair<double, double>> alloc_series;  // (t, rate) every series_step_s
    Dist guaranteed_wait;          // first start - submit, guaranteed jobs
    Dist guaranteed_wait_free;     // the same, jobs with no reclaim under way in their pool (a
                                   // notice sent, its victim not yet released) while they waited
    Dist guaranteed_wait_reclaim;  // the same, jobs with one (they may have waited for it)
    int idle_jobs = 0, idle_completed = 0;
    Dist idle_wait;                // first start - submit
    Dist idle_turnaround;          // completion - submit
    int preemptions = 0;           // preempted runs
    int reclaims = 0;              // groups of notices in one pool within 2 s
    Dist victims_per_reclaim;
    Dist owner_wait;               // per reclaim: first notice -> last victim released
    Dist owner_start;              // per reclaim: first notice -> next guaranteed start in the pool
    double gpu_s_lost = 0;         // sum over preempted runs of (done - kept) x GPUs
    double gpu_s_used = 0;         // sum over all runs of (end - start) x GPUs
};

Metrics compute_metrics(const EventLog &log, double series_step_s = 5.0);

// Broken invariants, one line each; empty = all hold. Checked: guaranteed use never above
// quota at any sample, every job submitted and completed (no job lost), every preempted
// job completed, no guaranteed (in-quota) run preempted.
std::vector<std::string> check_invariants(const EventLog &log);

}  // namespace idletime::replay
