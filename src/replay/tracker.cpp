#include "replay/tracker.hpp"
#include "core/config.hpp"

#include <algorithm>
#include <cstdlib>
#include <istream>
#include <sstream>

namespace idletime::replay {

void RunTracker::close(double end, double t)
{
    if (!open_)
        return;
    PolledRun &r = runs_[restarts_];
    r.end = end > 0 && end >= r.start ? std::min(end, t) : t;
    open_ = false;
}

void RunTracker::observe(const PollView &v, double t)
{
    if (v.restarts > restarts_) {  // requeued since the last poll
        close(v.end, t);
        restarts_ = v.restarts;
    }
    if (v.state == PollState::Running || v.state == PollState::Pending)
        completed_ = failed_ = false;  // an end seen earlier was a requeue after all
    switch (v.state) {
    case PollState::Running: {
        PolledRun &r = runs_[restarts_];
        if (!open_) {
            r.start = v.start > 0 ? v.start : t;
            r.seen = v.reply > 0 ? v.reply : -1;
            r.partition = v.partition;
            open_ = true;
        }
        if (v.preempt > 0 && r.notice < 0)
            r.notice = v.preempt;
        break;
    }
    case PollState::Completed:
    case PollState::Failed:
        close(v.end, t);
        completed_ = v.state == PollState::Completed;
        failed_ = !completed_;
        break;
    case PollState::Completing:
        close(v.end, t);
        break;
    case PollState::Pending:
        close(v.end, t);
        break;
    }
}

namespace {

double field(const std::string &line, const std::string &key)
{
    auto at = line.find(" " + key + "=");
    return at == std::string::npos ? 0 : std::atof(line.c_str() + at + key.size() + 2);
}

}  // namespace

std::map<uint32_t, LoggedRun> parse_worker_log(std::istream &in)
{
    std::map<uint32_t, LoggedRun> out;
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream ss(line);
        double t = 0;
        std::string ev;
        if (!(ss >> t >> ev))
            continue;
        LoggedRun &r = out[uint32_t(field(line, "restart"))];
        r.p = field(line, "progress");
        r.saved = field(line, "saved");
        if (ev == "start") {
            r.start = t;
            r.p0 = r.p;
        } else if (ev == "notice") {
            r.notice = t;
        } else if (ev == "done" || ev == "term" || ev == "release" || ev == "release-failed") {
            r.end = t;
            r.done = ev == "done";
        }
    }
    return out;
}

namespace {

JobRun merge_run(const PolledRun *pr, const LoggedRun *lr, bool ckpt, double t0)
{
    JobRun run;
    bool polled = pr && pr->start > 0, logged = lr && lr->start > 0;
    // Slurm's times are whole seconds (truncated): the true start lies in [start, start + 1),
    // not after the reply of the first poll that saw the run, nor after the worker's first log
    // line (which comes up to seconds after the allocation on a loaded node); the true end lies
    // in [end, end + 1).
    double start = polled ? pr->start : lr->start;
    if (polled && logged) {
        double latest = pr->start + 1;
        if (pr->seen > 0)
            latest = std::max(pr->start, std::min(latest, pr->seen));
        start = std::clamp(lr->start, pr->start, latest);
    }
    double end = pr && pr->end > 0 ? pr->end : lr && lr->end > 0 ? lr->end : start;
    if (pr && pr->end > 0 && lr && lr->end > 0)
        end = std::clamp(lr->end, pr->end, pr->end + 1);
    run.start_s = start - t0;
    run.end_s = std::max(run.start_s, end - t0);
    run.partition = pr ? pr->partition : "";
    run.in_quota = !quota_of_partition(run.partition).empty();
    double notice = pr && pr->notice > 0 ? pr->notice : -1;
    if (lr && lr->notice > 0 && (notice < 0 || lr->notice < notice))
        notice = lr->notice;
    run.notice_s = notice < 0 ? -1 : notice - t0;
    run.work_done_s = logged ? lr->p - lr->p0 : run.end_s - run.start_s;
    run.work_kept_s = logged && ckpt ? std::max(0.0, lr->saved - lr->p0) : 0;
    return run;
}

}  // namespace

JobRecord build_record(const ReplayJob &job, bool submitted, const RunTracker &tr,
                       const std::map<uint32_t, LoggedRun> &logs, bool ckpt, double t0)
{
    JobRecord rec;
    rec.job = job;
    rec.submitted = submitted;
    uint32_t last = tr.restarts();
    for (const auto &[r, lr] : logs)
        last = std::max(last, r);
    for (uint32_t r = 0; r <= last && submitted; r++) {
        auto pi = tr.runs().find(r);
        auto li = logs.find(r);
        const PolledRun *pr = pi == tr.runs().end() ? nullptr : &pi->second;
        const LoggedRun *lr = li == logs.end() ? nullptr : &li->second;
        if ((!pr || pr->start <= 0) && (!lr || lr->start <= 0))
            continue;  // a restart index that never ran (requeued while pending)
        JobRun run = merge_run(pr, lr, ckpt, t0);
        run.preempted = r < last || (r == last && !tr.completed() && tr.restarts() > r);
        rec.runs.push_back(run);
    }
    // Slurm 22.05 records a preempted job that finishes its work inside GraceTime as TIMEOUT:
    // the work is done (the worker logged "done"), so it counts as completed, not lost.
    auto lt = logs.find(last);
    bool worker_done = tr.ended() && lt != logs.end() && lt->second.done;
    rec.completed = (tr.completed() || worker_done) && !rec.runs.empty() && !rec.runs.back().preempted;
    return rec;
}

}  // namespace idletime::replay
