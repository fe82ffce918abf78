#include "spread.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <iomanip>
#include <sstream>
#include <stdexcept>

namespace idletime::replay {

namespace {

using Metric = std::function<double(const Metrics &)>;

const std::vector<std::pair<const char *, Metric>> &metrics()
{
    static const std::vector<std::pair<const char *, Metric>> m{
        {"GPU allocation, window (%)", [](const Metrics &x) { return 100 * x.alloc_rate_window; }},
        {"GPU allocation, whole run (%)", [](const Metrics &x) { return 100 * x.alloc_rate_run; }},
        {"makespan (s)", [](const Metrics &x) { return x.makespan_s; }},
        {"guaranteed wait p50 (s)", [](const Metrics &x) { return x.guaranteed_wait.p50; }},
        {"guaranteed wait p95 (s)", [](const Metrics &x) { return x.guaranteed_wait.p95; }},
        {"guaranteed wait p50, no reclaim in the pool while waiting (s)",
         [](const Metrics &x) { return x.guaranteed_wait_free.n ? x.guaranteed_wait_free.p50 : NAN; }},
        {"guaranteed wait p50, a reclaim in the pool while waiting (s)",
         [](const Metrics &x) { return x.guaranteed_wait_reclaim.n ? x.guaranteed_wait_reclaim.p50 : NAN; }},
        {"idle-time wait p50 (s)", [](const Metrics &x) { return x.idle_wait.p50; }},
        {"idle-time wait p95 (s)", [](const Metrics &x) { return x.idle_wait.p95; }},
        {"idle-time turnaround p95 (s)", [](const Metrics &x) { return x.idle_turnaround.p95; }},
        {"preemptions", [](const Metrics &x) { return double(x.preemptions); }},
        {"owner wait, notice -> released, max (s)", [](const Metrics &x) { return x.owner_wait.max; }},
        {"GPU-seconds of work lost", [](const Metrics &x) { return x.gpu_s_lost; }},
    };
    return m;
}

std::string f1(double v)
{
    std::ostringstream s;
    s << std::fixed << std::setprecision(1) << v;
    return s.str();
}

// min / median / max (median of an even count: the mean of the middle two) of the seeds that
// have the metric (NaN: none of its jobs); "-" when none has it.
std::string spread(std::vector<double> v)
{
    v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return std::isnan(x); }), v.end());
    if (v.empty())
        return "-";
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    return f1(v.front()) + " / " + f1(med) + " / " + f1(v.back());
}

}  // namespace

void write_spread_md(const std::string &report_path, const std::string &summary_path,
                     const std::vector<uint64_t> &seeds,
                     const std::vector<std::vector<ConfigResult>> &by_seed, const std::string &command)
{
    std::ofstream o(report_path), csv(summary_path);
    if (!o || !csv)
        throw std::runtime_error("cannot write " + report_path + " or " + summary_path);
    const auto &first = by_seed.front();
    o << "# Replay report: " << seeds.size() << " seeds\n\nProduced by:\n\n```\n" << command << "\n```\n\n"
      << "Each seed maps the trace anew (its own team/pool draws, sample and idle-time choice) and "
         "replays every configuration; each cell is min / median / max over the seeds.\n\n| metric |";
    for (const auto &r : first)
        o << ' ' << r.letter << " |";
    o << "\n|---|";
    for (size_t i = 0; i < first.size(); i++)
        o << "---|";
    o << "\n";
    for (const auto &[name, fn] : metrics()) {
        o << "| " << name << " |";
        for (size_t c = 0; c < first.size(); c++) {
            std::vector<double> v;
            for (const auto &rs : by_seed)
                v.push_back(fn(rs[c].metrics));
            o << ' ' << spread(v) << " |";
        }
        o << "\n";
    }
    int violations = 0;
    for (const auto &rs : by_seed)
        for (const auto &r : rs)
            violations += int(r.violations.size());
    o << "\nInvariant violations over all seeds and configurations: " << violations << ".\n\n";
    for (uint64_t s : seeds)
        o << "- seed " << s << ": [seed-" << s << "/report.md](seed-" << s << "/report.md)\n";
    csv << "config,seed";
    for (const auto &[name, fn] : metrics())
        csv << ",\"" << name << "\"";
    csv << ",violations\n";
    for (size_t i = 0; i < by_seed.size(); i++)
        for (const auto &r : by_seed[i]) {
            csv << r.letter << ',' << seeds[i];
            for (const auto &[name, fn] : metrics())
                csv << ',' << fn(r.metrics);
            csv << ',' << r.violations.size() << '\n';
        }
}

}  // namespace idletime::replay
