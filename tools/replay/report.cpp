#include "report.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <sys/wait.h>
#include <spawn.h>

extern char **environ;

namespace idletime::replay {

namespace {

std::string f1(double v)
{
    std::ostringstream s;
    s << std::fixed << std::setprecision(1) << v;
    return s.str();
}

void open_or_throw(std::ofstream &out, const std::string &path)
{
    out.open(path);
    if (!out)
        throw std::runtime_error("cannot write " + path);
}

}  // namespace

void write_config_files(const std::string &dir, const ConfigResult &r)
{
    std::ofstream runs;
    open_or_throw(runs, dir + "/runs.csv");
    runs << "id,class,quota,pool,gpus,submit_s,run,start_s,end_s,partition,in_quota,preempted,"
            "notice_s,work_done_s,work_kept_s,completed\n";
    for (const auto &j : r.log.jobs) {
        int k = 0;
        for (const auto &run : j.runs)
            runs << j.job.id << ',' << job_class_name(j.job.cls) << ',' << j.job.quota << ','
                 << j.job.pool << ',' << j.job.gpus << ',' << j.job.submit_s << ',' << k++ << ','
                 << run.start_s << ',' << run.end_s << ',' << run.partition << ',' << run.in_quota
                 << ',' << run.preempted << ',' << run.notice_s << ',' << run.work_done_s << ','
                 << run.work_kept_s << ',' << j.completed << '\n';
        if (j.runs.empty())
            runs << j.job.id << ',' << job_class_name(j.job.cls) << ',' << j.job.quota << ','
                 << j.job.pool << ',' << j.job.gpus << ',' << j.job.submit_s << ",,,,,,,,,,0\n";
    }
    std::set<std::string> names;
    for (const auto &q : r.log.quotas)
        names.insert(q.name);
    std::ofstream smp;
    open_or_throw(smp, dir + "/samples.csv");
    smp << "t";
    for (const auto &[pool, cap] : r.log.pool_capacity)
        smp << ",pool:" << pool;
    for (const auto &n : names)
        smp << ",quota:" << n;
    smp << '\n';
    for (const auto &s : r.log.samples) {
        smp << std::fixed << std::setprecision(2) << s.t;
        for (const auto &[pool, cap] : r.log.pool_capacity)
            smp << ',' << (s.pool_gpus.count(pool) ? s.pool_gpus.at(pool) : 0);
        for (const auto &n : names)
            smp << ',' << (s.quota_gpus.count(n) ? s.quota_gpus.at(n) : 0);
        smp << '\n';
    }
    std::ofstream al;
    open_or_throw(al, dir + "/alloc.csv");
    al << "t,alloc_rate\n";
    for (const auto &[t, rate] : r.metrics.alloc_series)
        al << t << ',' << rate << '\n';
}

void write_summary_csv(const std::string &path, const std::vector<ConfigResult> &rs)
{
    std::ofstream o;
    open_or_throw(o, path);
    o << "config,alloc_rate_window,alloc_rate_run,makespan_s,guaranteed_jobs,g_wait_p50,"
         "g_wait_p95,g_wait_max,idle_jobs,idle_completed,idle_wait_p50,idle_wait_p95,idle_wait_max,"
         "idle_turnaround_p50,idle_turnaround_p95,preemptions,reclaims,victims_per_reclaim_mean,"
         "victims_per_reclaim_max,owner_wait_p50,owner_wait_p95,owner_wait_max,owner_start_p50,"
         "owner_start_max,gpu_s_lost,gpu_s_used,g_wait_no_reclaim_jobs,g_wait_no_reclaim_p50,"
         "g_wait_reclaim_jobs,g_wait_reclaim_p50,violations\n";
    for (const auto &r : rs) {
        const Metrics &m = r.metrics;
        o << r.letter << ',' << m.alloc_rate_window << ',' << m.alloc_rate_run << ',' << m.makespan_s
          << ',' << m.guaranteed_wait.n << ',' << m.guaranteed_wait.p50 << ',' << m.guaranteed_wait.p95
          << ',' << m.guaranteed_wait.max << ',' << m.idle_jobs << ',' << m.idle_completed << ','
          << m.idle_wait.p50 << ',' << m.idle_wait.p95 << ',' << m.idle_wait.max << ','
          << m.idle_turnaround.p50 << ',' << m.idle_turnaround.p95 << ',' << m.preemptions << ','
          << m.reclaims << ',' << m.victims_per_reclaim.mean << ',' << m.victims_per_reclaim.max
          << ',' << m.owner_wait.p50 << ',' << m.owner_wait.p95 << ',' << m.owner_wait.max << ','
          << m.owner_start.p50 << ',' << m.owner_start.max << ',' << m.gpu_s_lost << ','
          << m.gpu_s_used << ',' << m.guaranteed_wait_free.n << ',' << m.guaranteed_wait_free.p50 << ','
          << m.guaranteed_wait_reclaim.n << ',' << m.guaranteed_wait_reclaim.p50 << ',' << r.violations.size() << '\n';
    }
}

namespace {

void results_table(std::ostream &o, const std::vector<ConfigResult> &rs)
{
    o << "| metric | ";
    for (const auto &r : rs)
        o << r.letter << " | ";
    o << "\n|---|";
    for (size_t i = 0; i < rs.size(); i++)
        o << "---|";
    o << "\n";
    auto row = [&](const char *name, auto fn) {
        o << "| " << name << " | ";
        for (const auto &r : rs)
            o << fn(r.metrics) << " | ";
        o << "\n";
    };
    row("GPU allocation, window (%)", [](const Metrics &m) { return f1(100 * m.alloc_rate_window); });
    row("GPU allocation, whole run (%)", [](const Metrics &m) { return f1(100 * m.alloc_rate_run); });
    row("makespan (s)", [](const Metrics &m) { return f1(m.makespan_s); });
    row("guaranteed wait p50 / p95 / max (s)", [](const Metrics &m) {
        return f1(m.guaranteed_wait.p50) + " / " + f1(m.guaranteed_wait.p95) + " / " + f1(m.guaranteed_wait.max);
    });
    row("guaranteed wait p50: no reclaim in the pool while waiting / one (jobs) (s)", [](const Metrics &m) {
        auto cell = [](const Dist &d) { return (d.n ? f1(d.p50) : "-") + " (" + std::to_string(d.n) + ")"; };
        return cell(m.guaranteed_wait_free) + " / " + cell(m.guaranteed_wait_reclaim);
    });
    row("idle-time jobs completed", [](const Metrics &m) {
        return std::to_string(m.idle_completed) + " of " + std::to_string(m.idle_jobs);
    });
    row("idle-time wait p50 / p95 / max (s)", [](const Metrics &m) {
        return f1(m.idle_wait.p50) + " / " + f1(m.idle_wait.p95) + " / " + f1(m.idle_wait.max);
    });
    row("idle-time turnaround p50 / p95 (s)", [](const Metrics &m) {
        return f1(m.idle_turnaround.p50) + " / " + f1(m.idle_turnaround.p95);
    });
    row("preemptions", [](const Metrics &m) { return std::to_string(m.preemptions); });
    row("reclaims (victims mean / max)", [](const Metrics &m) {
        return std::to_string(m.reclaims) + " (" + f1(m.victims_per_reclaim.mean) + " / " +
               f1(m.victims_per_reclaim.max) + ")";
    });
    row("owner wait: notice -> GPUs released p50 / p95 / max (s)", [](const Metrics &m) {
        return f1(m.owner_wait.p50) + " / " + f1(m.owner_wait.p95) + " / " + f1(m.owner_wait.max);
    });
    row("owner wait: notice -> next guaranteed start p50 / max (s)", [](const Metrics &m) {
        return f1(m.owner_start.p50) + " / " + f1(m.owner_start.max);
    });
    row("GPU-seconds of work lost", [](const Metrics &m) { return f1(m.gpu_s_lost); });
    row("GPU-seconds allocated", [](const Metrics &m) { return f1(m.gpu_s_used); });
}

}  // namespace

void write_report_md(const std::string &path, const std::vector<ConfigResult> &rs,
                     const std::string &command, const std::string &mapping)
{
    std::ofstream o;
    open_or_throw(o, path);
    o << "# Replay report\n\nProduced by:\n\n```\n" << command << "\n```\n\n" << mapping << "\n";
    o << "## Configurations\n\n";
    for (const auto &r : rs)
        o << "- **" << r.letter << "**: " << r.title << " (slurmctld: " << r.ctld << ")\n";
    o << "\n## Results\n\nTimes in seconds of replay (wall clock). Allocation = allocated GPUs / all "
         "GPUs, time-weighted, over the submission window and over the whole run.\n\n";
    results_table(o, rs);
    o << "\n![GPU allocation over time](alloc.png)\n\n![Guaranteed-job and owner wait](waits.png)\n\n"
         "![Work lost to preemption](lost.png)\n\n";
    for (const auto &r : rs)
        o << "![Guaranteed use per quota, " << r.letter << "](quota-" << r.letter << ".png)\n";
    o << "\n";
    o << "## Invariants\n\n";
    for (const auto &r : rs) {
        o << "- " << r.letter << ": ";
        if (r.violations.empty())
            o << "all hold (guaranteed use <= quota at all " << r.log.samples.size()
              << " samples, every job completed, every preempted job completed)\n";
        else
            for (const auto &v : r.violations)
                o << "\n  - FAILED: " << v;
        o << "\n";
    }
}

namespace {

bool run_gnuplot(const std::string &dir, const std::string &script)
{
    std::string path = dir + "/" + script;
    char *argv[] = {const_cast<char *>("gnuplot"), const_cast<char *>(path.c_str()), nullptr};
    pid_t pid = 0;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    int rc = posix_spawnp(&pid, "gnuplot", &fa, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    int status = 0;
    if (rc != 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::cerr << "idletime/replay: gnuplot " << path << " failed\n";
        return false;
    }
    return true;
}

void alloc_script(std::ostream &o, const std::vector<ConfigResult> &rs, const char *term,
                  const char *out)
{
    o << "set terminal " << term << "\nset output '" << out << "'\n"
      << "set datafile separator ','\nset key outside right\nset grid\n"
      << "set xlabel 'replay time (s)'\nset ylabel 'GPUs allocated (%)'\nset yrange [0:105]\n"
      << "set title 'GPU allocation over time (5 s buckets)'\nplot ";
    for (size_t i = 0; i < rs.size(); i++)
        o << (i ? ", " : "") << "'" << rs[i].letter << "/alloc.csv' every ::1 using 1:($2*100) "
          << "with steps lw 2 title '" << rs[i].letter << "'";
    o << "\n";
}

void waits_script(std::ostream &o, const char *term, const char *out)
{
    o << "set terminal " << term << "\nset output '" << out << "'\n"
      << "set datafile separator ','\nset style data histograms\nset style histogram clustered gap 1\n"
      << "set style fill solid 0.8 border -1\nset grid y\nset key outside right\nset yrange [0:*]\n"
      << "set ylabel 'seconds'\nset title 'Guaranteed-job wait and owner wait per configuration'\n"
      << "plot 'summary.csv' every ::1 using 6:xtic(1) title 'guaranteed wait p50', "
         "'' every ::1 using 7 title 'guaranteed wait p95', '' every ::1 using 8 title 'guaranteed wait max', "
         "'' every ::1 using 20 title 'owner wait p50 (notice->release)', '' every ::1 using 22 title 'owner wait max'\n";
}

void lost_script(std::ostream &o, const char *term, const char *out)
{
    o << "set terminal " << term << "\nset output '" << out << "'\n"
      << "set datafile separator ','\nset style data histograms\nset style histogram clustered gap 1\n"
      << "set style fill solid 0.8 border -1\nset grid y\nset key outside right\nset yrange [0:*]\n"
      << "set ylabel 'GPU-seconds'\nset title 'Work lost to preemption per configuration'\n"
      << "plot 'summary.csv' every ::1 using 25:xtic(1) title 'GPU-s of work lost'\n";
}

// Guaranteed GPUs of each quota as polled (samples.csv) against its quota, one file per config.
void quota_script(std::ostream &o, const ConfigResult &r, const char *term, const std::string &out)
{
    o << "set terminal " << term << "\nset output '" << out << "'\n"
      << "set datafile separator ','\nset key outside right\nset grid\n"
      << "set xlabel 'replay time (s)'\nset ylabel 'guaranteed GPUs in use'\n";
    int col = 2 + int(r.log.pool_capacity.size()), k = 0, top = 1;
    std::map<std::string, int> quota;
    for (const auto &q : r.log.quotas) {
        quota[q.name] = q.gpus;
        top = std::max(top, q.gpus + 1);
    }
    o << "set yrange [0:" << top << "]\n"
      << "set title 'Configuration " << r.letter << ": guaranteed use per quota (lines) and quota (dashed)'\nplot ";
    for (const auto &[name, gpus] : quota) {  // samples.csv lists quotas in name order too
        o << (k ? ", " : "") << "'" << r.letter << "/samples.csv' every ::1 using 1:" << col + k
          << " with steps lw 2 lc " << k + 1 << " title '" << name << "', " << gpus << " with lines dt 2 lc "
          << k + 1 << " notitle";
        k++;
    }
    o << "\n";
}

}  // namespace

bool write_plots(const std::string &dir, const std::vector<ConfigResult> &rs)
{
    bool ok = true;
    const std::pair<const char *, const char *> terms[] = {{"pngcairo size 900,450", "png"},
                                                           {"svg size 900,450", "svg"}};
    for (const auto &[term, ext] : terms) {
        std::string a = std::string("alloc-") + ext + ".gp", w = std::string("waits-") + ext + ".gp",
                    l = std::string("lost-") + ext + ".gp";
        {
            std::ofstream o;
            open_or_throw(o, dir + "/" + a);
            o << "cd '" << dir << "'\n";
            alloc_script(o, rs, term, (std::string("alloc.") + ext).c_str());
            std::ofstream q;
            open_or_throw(q, dir + "/" + w);
            q << "cd '" << dir << "'\n";
            waits_script(q, term, (std::string("waits.") + ext).c_str());
            std::ofstream r;
            open_or_throw(r, dir + "/" + l);
            r << "cd '" << dir << "'\n";
            lost_script(r, term, (std::string("lost.") + ext).c_str());
        }
        ok = run_gnuplot(dir, l) && ok;
        for (const auto &r : rs) {
            std::string qs = std::string("quota-") + r.letter + "-" + ext + ".gp";
            {
                std::ofstream q;
                open_or_throw(q, dir + "/" + qs);
                q << "cd '" << dir << "'\n";
                quota_script(q, r, term, std::string("quota-") + r.letter + "." + ext);
            }
            ok = run_gnuplot(dir, qs) && ok;
        }
        ok = run_gnuplot(dir, a) && ok;
        ok = run_gnuplot(dir, w) && ok;
    }
    return ok;
}

}  // namespace idletime::replay
