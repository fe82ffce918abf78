#include "replay/stream.hpp"

#include <cstdio>
#include <istream>
#include <ostream>
#include <sstream>

namespace idletime::replay {

namespace {

constexpr const char *kJobsHeader = "id,submit_s,duration_s,gpus,class,quota,pool,spec,nodes";
constexpr const char *kQuotasHeader = "quota,pool,gpus,demand_gpus";

std::string fmt(double v)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", v);
    return buf;
}

std::vector<std::string> fields(const std::string &line)
{
    std::vector<std::string> out;
    std::stringstream ss(line);
    std::string f;
    while (std::getline(ss, f, ','))
        out.push_back(f);
    if (!line.empty() && line.back() == ',')
        out.emplace_back();
    return out;
}

double number(const std::string &s, const std::string &where)
{
    size_t used = 0;
    double v = 0;
    try {
        v = std::stod(s, &used);
    } catch (const std::exception &) {
        used = 0;
    }
    if (used == 0 || used != s.size() || v < 0)
        throw TraceError(where + ": '" + s + "' is not a non-negative number");
    return v;
}

// Calls fn(fields, where) for each data line after checking the header and field count.
template <class Fn>
void each_row(std::istream &in, const std::string &origin, const char *header, size_t n, Fn fn)
{
    std::string line;
    if (!std::getline(in, line) || line != header)
        throw TraceError(origin + ":1: header must be '" + header + "'");
    for (size_t lineno = 2; std::getline(in, line); lineno++) {
        if (line.empty())
            continue;
        auto f = fields(line);
        std::string where = origin + ":" + std::to_string(lineno);
        if (f.size() != n)
            throw TraceError(where + ": " + std::to_string(f.size()) + " fields, expected " +
                             std::to_string(n));
        fn(f, where);
    }
}

}  // namespace

void write_jobs_csv(std::ostream &out, const std::vector<ReplayJob> &jobs)
{
    out << kJobsHeader << '\n';
    for (const auto &j : jobs)
        out << j.id << ',' << fmt(j.submit_s) << ',' << fmt(j.duration_s) << ',' << j.gpus << ','
            << job_class_name(j.cls) << ',' << j.quota << ',' << j.pool << ',' << j.spec << ','
            << j.nodes << '\n';
}

void write_quotas_csv(std::ostream &out, const std::vector<Quota> &quotas)
{
    out << kQuotasHeader << '\n';
    for (const auto &q : quotas)
        out << q.name << ',' << q.pool << ',' << q.gpus << ',' << fmt(q.demand_gpus) << '\n';
}

std::vector<ReplayJob> read_jobs_csv(std::istream &in, const std::string &origin)
{
    std::vector<ReplayJob> out;
    each_row(in, origin, kJobsHeader, 9, [&](const std::vector<std::string> &f, const std::string &w) {
        ReplayJob j;
        j.id = f[0];
        j.submit_s = number(f[1], w);
        j.duration_s = number(f[2], w);
        j.gpus = static_cast<int>(number(f[3], w));
        if (f[4] != "guaranteed" && f[4] != "idle")
            throw TraceError(w + ": class '" + f[4] + "' unknown, allowed: guaranteed, idle");
        j.cls = f[4] == "idle" ? JobClass::Idle : JobClass::Guaranteed;
        j.quota = f[5];
        j.pool = f[6];
        j.spec = f[7];
        j.nodes = static_cast<int>(number(f[8], w));
        if (j.id.empty() || j.quota.empty() || j.pool.empty() || j.gpus < 1 || j.nodes < 1 || j.gpus % j.nodes)
            throw TraceError(w + ": id, quota, pool must be set, gpus and nodes >= 1, gpus a multiple of nodes");
        out.push_back(std::move(j));
    });
    return out;
}

std::vector<Quota> read_quotas_csv(std::istream &in, const std::string &origin)
{
    std::vector<Quota> out;
    each_row(in, origin, kQuotasHeader, 4, [&](const std::vector<std::string> &f, const std::string &w) {
        out.push_back({f[0], f[1], static_cast<int>(number(f[2], w)), number(f[3], w)});
    });
    return out;
}

}  // namespace idletime::replay
