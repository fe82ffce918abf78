// From polled job states and the workers' own logs to the runs of one job (pure; the driver
// feeds it what slurm_load_jobs returned and what idletime-replay-job wrote).
#pragma once
#include "replay/metrics.hpp"

#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>

namespace idletime::replay {

enum class PollState { Pending, Running, Completing, Completed, Failed };

// One poll of one job. Times are epoch seconds (Slurm's, 1 s resolution); 0 = unset.
struct PollView {
    PollState state = PollState::Pending;
    uint32_t restarts = 0;     // Slurm's restart_cnt
    double start = 0, end = 0, preempt = 0;
    std::string partition;     // the one it runs in
    double reply = 0;          // epoch when the poll's reply was in hand (0 = unknown)
};

// A run as polling saw it (restart index = key).
struct PolledRun {
    double start = -1, end = -1, notice = -1;
    double seen = -1;  // reply time of the first poll that saw it running: it started before
    std::string partition;
};

// A run as the worker logged it ("<epoch> <event> restart=<n> progress=<s> saved=<s>").
struct LoggedRun {
    double start = -1, end = -1, notice = -1, p0 = 0, p = 0, saved = 0;
    bool done = false;
};

class RunTracker {
public:
    // Applies one poll taken at epoch time t.
    void observe(const PollView &v, double t);
    bool ended() const { return completed_ || failed_; }
    bool completed() const { return completed_; }
    bool running() const { return open_; }
    uint32_t restarts() const { return restarts_; }
    const std::map<uint32_t, PolledRun> &runs() const { return runs_; }

private:
    void close(double end, double t);
    std::map<uint32_t, PolledRun> runs_;
    uint32_t restarts_ = 0;
    bool open_ = false, completed_ = false, failed_ = false;
};

std::map<uint32_t, LoggedRun> parse_worker_log(std::istream &in);

// Merges both views into a JobRecord with times relative to t0 (epoch of the first submission).
// A run is preempted when a later run exists or Slurm requeued it; the job is completed when
// Slurm says so or when it ended and the worker logged "done" (TIMEOUT after a notice whose
// grace ran out as the work finished); ckpt says whether saved
// progress survives (config C) or a rerun starts from zero.
JobRecord build_record(const ReplayJob &job, bool submitted, const RunTracker &tr,
                       const std::map<uint32_t, LoggedRun> &logs, bool ckpt, double t0);

}  // namespace idletime::replay
