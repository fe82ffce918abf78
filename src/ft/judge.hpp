// What the controller-side hook does at the end of one run of a job, as a pure function of a
// plain snapshot of the job (copied from libslurm's job_info_t by src/hook/). No Slurm types.
#pragma once
#include "ft/ft.hpp"

namespace idletime::ft {

// How the run ended, as Slurm reports it (base job state).
enum class JobEnd { Completed, Failed, Cancelled, Timeout, NodeFail, Preempted, OutOfMemory,
                    Requeued, Other };

struct JobSnapshot {
    uint32_t job_id = 0;
    // Slurm's restart count now. When Slurm requeued the job itself (requeued), it has already
    // counted the new run: the run that ended is restart_cnt - 1.
    uint32_t restart_cnt = 0;
    JobEnd end = JobEnd::Other;
    bool requeued = false;      // Slurm already put the job back to PENDING
    int wait_status = 0;        // job_info_t.exit_code: a wait(2) status
    int64_t start_time = 0;     // start of the run that ended
    int64_t preempt_time = 0;   // job_info_t.preempt_time (0 = never picked as a victim)
    std::string admin_comment;  // durable state (kStatePrefix...) or empty
    std::string comment;        // agent report (kReportPrefix...) or anything the user wrote
    std::map<std::string, std::string> env_overrides;  // per-job settings from SPANK options
    // The run's partition is one the site config renders (quota-*/idle-*), as slurmctld reports
    // it; true when unknown (no usable config). A job outside them with no idletime state in its
    // AdminComment and no idletime options is the site's own: the hook leaves it to Slurm.
    bool managed_partition = true;
    // The time-limit warning: a run that died of it (a batch script without a trap) near its
    // time limit reached its limit; it is not a failure to retry. 0 = unknown.
    int64_t end_time = 0;        // when the run ended (job_info_t.end_time)
    int64_t time_limit_s = 0;    // the job's time limit, 0 = none
    int notice_signal = 0;       // the site's checkpoint_signal (job_submit's --signal)
    int64_t notice_window_s = 0; // how long before the limit Slurm may send it
    // Node names (expanded) of the run, of those that are down/failing/drained now, and of
    // the job's required node list (-w), which Slurm will not let us exclude.
    std::vector<std::string> nodes, failed_nodes, required_nodes;
    // Slurm requeued the job for a node failure: its epilog environment was built before the
    // restart count went up (SLURM_JOB_RESTART_COUNT == restart_cnt - 1; a preemption or an
    // owner's requeue counts up first). Needed because a DOWN node may be back (ReturnToService)
    // before the hook looks at it.
    bool node_requeue = false;
};

// Restart count of the run that ended (see restart_cnt).
uint32_t ended_run(const JobSnapshot &j);

enum class Op {
    Nothing,     // run already judged (hook ran twice) or nothing to store
    Record,      // store new_state only (success, preemption Slurm already requeued, failure)
    Requeue,     // store new_state (pending "requeue"), requeue, set begin time, confirm
    Cancel,      // store new_state and cancel the (already requeued) job: a limit was reached
};
const char *op_str(Op o);

struct Plan {
    Op op = Op::Nothing;
    JobState new_state;
    int64_t begin_at = 0;          // for Requeue: earliest start of the next run
    Classification cause;
    Decision decision;
    std::vector<std::string> notes;  // log lines (ignored report, bad overrides, bad state)
    // Nodes to add to the job's excluded nodes before its next run (node failures only):
    // failed nodes of the run that are not in its required node list.
    std::vector<std::string> exclude_nodes;
};

// site: validated site settings. now: current time (epoch seconds).
Plan judge(const FtSettings &site, const JobSnapshot &job, int64_t now);

}  // namespace idletime::ft
