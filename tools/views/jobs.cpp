// idletime-jobs: the job list users look at (idletime-jobs(1)), and one job's history (--events).
#include <slurm/slurm.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <iostream>
#include <set>

#include "core/cmdline.hpp"
#include "tools/views/cli.hpp"
#include "tools/views/slurm_read.hpp"
#include "views/output.hpp"

namespace {

using namespace idletime;
using namespace idletime::views;
const char *kProg = "idletime jobs";

const char *kUsage =
    "Usage: idletime jobs [--config=PATH] [--user=U,..] [--quota=Q,..] [--tenant=T,..] [--state=S,..]\n"
    "                     [--json | --format=FMT] [--noheader]\n"
    "       idletime jobs [--config=PATH] [--json] --events JOBID\n"
    "States: queuing, running, resource-preempted, restarting, succeeded, failed, stopped.\n"
    "See idletime-jobs(1) for the columns, the --format letters and the JSON schema.\n";

struct Opts {
    std::string config, format;
    std::set<std::string> users, quotas, tenants;
    std::set<Status> states;
    bool json = false, header = true;
    uint32_t events = 0;
};

int parse_list(const std::string &flag, const std::string &v, std::set<std::string> &out) {
    if (v.empty()) return cli::bad(kProg, flag + " needs a value (a comma-separated list)");
    for (const std::string &x : cli::split(v)) out.insert(x);
    return 0;
}

int parse_states(const std::string &v, std::set<Status> &out) {
    if (v.empty()) return cli::bad(kProg, "--state needs a value");
    for (const std::string &x : cli::split(v)) {
        Status s;
        if (!status_parse(x, s))
            return cli::bad(kProg, "--state: unknown state \"" + x +
                                       "\" (allowed: queuing, running, resource-preempted, restarting, "
                                       "succeeded, failed, stopped)");
        out.insert(s);
    }
    return 0;
}

int parse_events(const std::string &v, uint32_t &out) {
    char *end = nullptr;
    unsigned long n = std::strtoul(v.c_str(), &end, 10);
    if (v.empty() || *end || n == 0 || n > 0xfffffffful)
        return cli::bad(kProg, "--events: \"" + v + "\" is not a job id (a positive integer)");
    out = uint32_t(n);
    return 0;
}

int parse(const std::vector<std::string> &args, Opts &o) {
    for (size_t i = 0; i < args.size(); i++) {
        std::string v;
        int rc = 0;
        const std::string &a = args[i];
        if (a == "--help") return cmdline::help(kUsage), -1;
        if (a == "--version") return cmdline::version(kProg), -1;
        if (a == "--json") o.json = true;
        else if (a == "--noheader" || a == "-h") o.header = false;
        else if (cli::option(args, i, "--config", v)) o.config = v;
        else if (cli::option(args, i, "--user", v)) rc = parse_list("--user", v, o.users);
        else if (cli::option(args, i, "--quota", v)) rc = parse_list("--quota", v, o.quotas);
        else if (cli::option(args, i, "--tenant", v)) rc = parse_list("--tenant", v, o.tenants);
        else if (cli::option(args, i, "--state", v)) rc = parse_states(v, o.states);
        else if (cli::option(args, i, "--events", v)) rc = parse_events(v, o.events);
        else if (cli::option(args, i, "--format", v)) {
            if (v.empty()) return cli::bad(kProg, "--format needs a value, e.g. --format=\"%i %j %T\"");
            o.format = v;
        } else if (a.size() > 1 && a[0] == '-')
            return cmdline::unknown_option(kProg, a, kUsage);
        else
            return cli::bad(kProg, "unexpected argument \"" + a + "\" (see idletime jobs --help)");
        if (rc) return rc;
    }
    if (o.json && !o.format.empty()) return cli::bad(kProg, "--json and --format exclude each other");
    return 0;
}

// Unknown names in filters are bad input: a typo must not print an empty list that looks right.
int check_names(const Config &cfg, const Opts &o) {
    for (const std::string &q : o.quotas)
        if (!cfg.quota(q)) return cli::bad(kProg, "--quota: unknown quota \"" + q + "\" (see idletime quota)");
    for (const std::string &t : o.tenants)
        if (!cfg.tenant(t)) return cli::bad(kProg, "--tenant: unknown tenant \"" + t + "\"");
    return 0;
}

bool keep(const Opts &o, const JobView &v) {
    if (!o.users.empty() && !o.users.count(v.job->user)) return false;
    if (!o.quotas.empty() && !o.quotas.count(v.quota)) return false;
    if (!o.tenants.empty() && !o.tenants.count(v.tenant)) return false;
    if (!o.states.empty() && !o.states.count(v.status)) return false;
    return true;
}

// An ended job's final FT record (e.g. "max restarts exceeded") is only in accounting: one
// slurmdbd query for the ended jobs that did not succeed. Without slurmdbd the live record stays.
void fill_final_records(std::vector<JobInfo> &jobs) {
    std::vector<uint32_t> ids;
    for (const JobInfo &j : jobs)
        if (j.state != SlurmState::Pending && j.state != SlurmState::Running && j.state != SlurmState::Suspended &&
            j.state != SlurmState::Complete)
            ids.push_back(j.job_id);
    std::map<uint32_t, std::string> acct;
    std::string err;
    if (ids.empty() || !slurmread::accounting_admin_comments(ids, acct, err)) return;
    for (JobInfo &j : jobs) {
        auto it = acct.find(j.job_id);
        if (it != acct.end()) j.admin_comment = newest_record(j.admin_comment, it->second);
    }
}

int list(const Config &cfg, const Opts &o) {
    std::vector<JobInfo> jobs;
    std::string err, why;
    if (!slurmread::load_jobs(jobs, err)) return std::cerr << kProg << ": slurm_load_jobs: " << err << "\n", 1;
    fill_final_records(jobs);
    bool op = slurmread::is_operator(getuid(), why);
    Catalog cat(cfg);
    int64_t now = time(nullptr);
    std::vector<JobView> views;
    views.reserve(jobs.size());
    for (const JobInfo &j : jobs) {
        JobView v = derive(cat, j, now, op);
        if (keep(o, v)) views.push_back(std::move(v));
    }
    std::sort(views.begin(), views.end(), [](const JobView &a, const JobView &b) { return a.job->job_id < b.job->job_id; });
    std::string out;
    if (o.json) out = jobs_json(views, now);
    else if (!o.format.empty()) {
        std::vector<FormatItem> fmt;
        if (!format_parse(o.format, fmt, err)) return cli::bad(kProg, err);
        out = jobs_formatted(views, fmt, o.header);
    } else
        out = jobs_table(views, o.header);
    std::cout << out;
    return std::cout.flush() ? 0 : 1;
}

}  // namespace

int events_main(const Config &cfg, uint32_t job_id, bool json);  // events.cpp

int main(int argc, char **argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    Opts o;
    int rc = parse(args, o);
    if (rc) return rc < 0 ? 0 : rc;
    Config cfg;
    std::string err;
    if (!cli::load_config(o.config, cfg, err)) return cli::bad(kProg, err);
    if ((rc = check_names(cfg, o))) return rc;
    slurm_init(nullptr);
    rc = o.events ? events_main(cfg, o.events, o.json) : list(cfg, o);
    slurm_fini();
    return rc;
}
