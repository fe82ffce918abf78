#include "replay/metrics.hpp"

#include <algorithm>
#include <cmath>

namespace idletime::replay {

Dist distribution(std::vector<double> v)
{
    Dist d;
    d.n = static_cast<int>(v.size());
    if (v.empty())
        return d;
    std::sort(v.begin(), v.end());
    auto rank = [&](double p) {
        size_t k = static_cast<size_t>(std::ceil(p * double(v.size())));
        return v[std::clamp<size_t>(k, 1, v.size()) - 1];
    };
    d.p50 = rank(0.50);
    d.p95 = rank(0.95);
    d.max = v.back();
    double sum = 0;
    for (double x : v)
        sum += x;
    d.mean = sum / double(v.size());
    return d;
}

namespace {

int total_capacity(const EventLog &log)
{
    int c = 0;
    for (const auto &[pool, gpus] : log.pool_capacity)
        c += gpus;
    return c;
}

// GPU-seconds allocated inside [a, b).
double gpu_seconds(const EventLog &log, double a, double b)
{
    double s = 0;
    for (const auto &r : log.jobs)
        for (const auto &run : r.runs)
            s += std::max(0.0, std::min(run.end_s, b) - std::max(run.start_s, a)) * r.job.gpus;
    return s;
}

struct Notice {
    double t, release;
    std::string pool;
};

// Every preemption notice (the end of a preempted run that saw none), by pool, then time.
std::vector<Notice> notices(const EventLog &log)
{
    std::vector<Notice> ns;
    for (const auto &r : log.jobs)
        for (const auto &run : r.runs)
            if (run.preempted)
                ns.push_back({run.notice_s >= 0 ? run.notice_s : run.end_s, run.end_s, r.job.pool});
    std::sort(ns.begin(), ns.end(), [](const Notice &a, const Notice &b) {
        return a.pool != b.pool ? a.pool < b.pool : a.t < b.t;
    });
    return ns;
}

// Guaranteed waits split by whether a reclaim was under way in the job's pool while it waited
// (a notice sent before its victim released, overlapping [submit, first start]).
void split_guaranteed_wait(const EventLog &log, const std::vector<Notice> &ns, Metrics &m)
{
    std::vector<double> free, reclaim;
    for (const auto &r : log.jobs) {
        if (r.job.cls != JobClass::Guaranteed || r.runs.empty())
            continue;
        double from = r.job.submit_s, to = r.runs.front().start_s;
        if (to < from)
            continue;  // as in guaranteed_wait
        bool noticed = std::any_of(ns.begin(), ns.end(), [&](const Notice &n) {
            return n.pool == r.job.pool && n.t <= to && std::max(n.t, n.release) >= from;
        });
        (noticed ? reclaim : free).push_back(to - from);
    }
    m.guaranteed_wait_free = distribution(free);
    m.guaranteed_wait_reclaim = distribution(reclaim);
}

void reclaim_metrics(const EventLog &log, Metrics &m)
{
    std::vector<Notice> ns = notices(log);
    split_guaranteed_wait(log, ns, m);
    std::vector<double> victims, wait, start;
    for (size_t i = 0; i < ns.size();) {
        size_t j = i;
        double release = ns[i].release;
        while (j + 1 < ns.size() && ns[j + 1].pool == ns[i].pool && ns[j + 1].t - ns[i].t <= 2.0)
            release = std::max(release, ns[++j].release);
        victims.push_back(double(j - i + 1));
        wait.push_back(release - ns[i].t);
        double next = -1;
        for (const auto &r : log.jobs)
            for (const auto &run : r.runs)
                if (run.in_quota && r.job.pool == ns[i].pool && run.start_s >= ns[i].t &&
                    (next < 0 || run.start_s < next))
                    next = run.start_s;
        if (next >= 0)
            start.push_back(next - ns[i].t);
        i = j + 1;
    }
    m.reclaims = static_cast<int>(victims.size());
    m.victims_per_reclaim = distribution(victims);
    m.owner_wait = distribution(wait);
    m.owner_start = distribution(start);
}

}  // namespace

Metrics compute_metrics(const EventLog &log, double series_step_s)
{
    Metrics m;
    std::vector<double> gwait, iwait, iturn;
    for (const auto &r : log.jobs) {
        for (const auto &run : r.runs) {
            m.makespan_s = std::max(m.makespan_s, run.end_s);
            m.gpu_s_used += (run.end_s - run.start_s) * r.job.gpus;
            if (run.preempted) {
                m.preemptions++;
                m.gpu_s_lost += std::max(0.0, run.work_done_s - run.work_kept_s) * r.job.gpus;
            }
        }
        double wait = r.runs.empty() ? -1 : r.runs.front().start_s - r.job.submit_s;
        if (r.job.cls == JobClass::Guaranteed) {
            if (wait >= 0)
                gwait.push_back(wait);
            continue;
        }
        m.idle_jobs++;
        if (wait >= 0)
            iwait.push_back(wait);
        if (r.completed) {
            m.idle_completed++;
            iturn.push_back(r.runs.back().end_s - r.job.submit_s);
        }
    }
    m.guaranteed_wait = distribution(gwait);
    m.idle_wait = distribution(iwait);
    m.idle_turnaround = distribution(iturn);
    reclaim_metrics(log, m);
    double cap = total_capacity(log);
    if (cap > 0 && log.span_s > 0)
        m.alloc_rate_window = gpu_seconds(log, 0, log.span_s) / (cap * log.span_s);
    if (cap > 0 && m.makespan_s > 0)
        m.alloc_rate_run = gpu_seconds(log, 0, m.makespan_s) / (cap * m.makespan_s);
    for (double t = 0; cap > 0 && series_step_s > 0 && t < m.makespan_s; t += series_step_s)
        m.alloc_series.emplace_back(t, gpu_seconds(log, t, t + series_step_s) / (cap * series_step_s));
    return m;
}

std::vector<std::string> check_invariants(const EventLog &log)
{
    std::vector<std::string> bad;
    std::map<std::string, int> quota;
    for (const auto &q : log.quotas)
        quota[q.name] = q.gpus;
    for (const auto &s : log.samples)
        for (const auto &[name, used] : s.quota_gpus)
            if (used > quota[name])
                bad.push_back("at t=" + std::to_string(s.t) + " s quota " + name + " used " +
                              std::to_string(used) + " GPUs, above its quota of " +
                              std::to_string(quota[name]));
    for (const auto &r : log.jobs) {
        bool preempted = false;
        for (const auto &run : r.runs) {
            preempted |= run.preempted;
            if (run.preempted && run.in_quota)
                bad.push_back("job " + r.job.id + " was preempted while running in quota (" +
                              run.partition + ")");
        }
        if (!r.submitted)
            bad.push_back("job " + r.job.id + " was never submitted");
        else if (!r.completed)
            bad.push_back(std::string(preempted ? "preempted job " : "job ") + r.job.id +
                          " did not complete");
    }
    return bad;
}

}  // namespace idletime::replay
