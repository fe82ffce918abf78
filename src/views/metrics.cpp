#include "views/metrics.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "ft/ft.hpp"

namespace idletime::views {

const std::vector<double> kWaitBuckets = {1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600, 86400};

void Histogram::observe(double v) {
    size_t i = 0;
    while (i < kWaitBuckets.size() && v > kWaitBuckets[i]) i++;
    counts[i]++;
    sum += v;
    count++;
}

std::string label_escape(const std::string &v) {
    std::string out;
    for (char c : v) {
        if (c == '\\') out += "\\\\";
        else if (c == '"') out += "\\\"";
        else if (c == '\n') out += "\\n";
        else out += c;
    }
    return out;
}

const char *restart_cause(const std::string &kind) {
    static const std::map<std::string, const char *> causes = {
        {"preempt", "preemption"}, {"exit", "exit_code"}, {"sig", "exit_code"}, {"msg", "error_message"},
        {"hung", "hang"},          {"node", "node"},      {"timeout", "time_limit"}};
    auto it = causes.find(kind);
    return it == causes.end() ? "" : it->second;
}

namespace {

using Labels = std::vector<std::pair<const char *, std::string>>;

class Writer {
public:
    void family(const std::string &name, const char *type, const char *help) {
        out_ += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
    }
    void sample(const std::string &name, const Labels &labels, double value) {
        out_ += name;
        if (!labels.empty()) {
            out_ += '{';
            for (size_t i = 0; i < labels.size(); i++)
                out_ += std::string(i ? "," : "") + labels[i].first + "=\"" + label_escape(labels[i].second) + "\"";
            out_ += '}';
        }
        char buf[64];
        if (value == std::floor(value) && std::fabs(value) < 1e15) std::snprintf(buf, sizeof buf, " %.0f\n", value);
        else std::snprintf(buf, sizeof buf, " %.6g\n", value);
        out_ += buf;
    }
    void histogram(const std::string &name, const char *help, const Histogram &h) {
        family(name, "histogram", help);
        uint64_t cum = 0;
        char le[32];
        for (size_t i = 0; i < kWaitBuckets.size(); i++) {
            cum += h.counts[i];
            std::snprintf(le, sizeof le, "%g", kWaitBuckets[i]);
            sample(name + "_bucket", {{"le", le}}, double(cum));
        }
        sample(name + "_bucket", {{"le", "+Inf"}}, double(h.count));
        sample(name + "_sum", {}, h.sum);
        sample(name + "_count", {}, double(h.count));
    }
    std::string take() { return std::move(out_); }

private:
    std::string out_;
};

struct Field {
    const char *name;
    const char *help;
    Amount QuotaUse::*q;
};

void quota_series(Writer &w, const Accounting &a) {
    static const Field fields[] = {
        {"guaranteed", "guaranteed share of the quota", &QuotaUse::guaranteed},
        {"used", "used by the quota's guaranteed runs (In Quota)", &QuotaUse::used},
        {"lent", "the quota's unused share that idle-time jobs of others (or its own beyond its share) use",
         &QuotaUse::lent},
        {"own_idle", "the quota's own idle-time runs inside its unused share", &QuotaUse::own},
        {"borrowed", "used by the quota's idle-time runs (Not in Quota)", &QuotaUse::borrowed},
        {"pending", "requested by the quota's pending jobs", &QuotaUse::pending}};
    for (const Field &f : fields)
        for (bool gpus : {true, false}) {
            std::string name = std::string("idletime_quota_") + f.name + (gpus ? "_gpus" : "_cpus");
            w.family(name, "gauge", (std::string(gpus ? "GPUs " : "CPUs ") + f.help + " (idletime quota)").c_str());
            for (const QuotaUse &q : a.quotas)
                w.sample(name, {{"tenant", q.tenant}, {"pool", q.pool}, {"quota", q.quota->name}},
                         double(gpus ? (q.*f.q).gpus : (q.*f.q).cpus));
        }
    struct J { const char *name, *help; uint32_t QuotaUse::*n; };
    static const J jobs[] = {
        {"idletime_quota_guaranteed_running_jobs", "running jobs of the quota in its quota partition",
         &QuotaUse::running_jobs},
        {"idletime_quota_idle_running_jobs", "running idle-time jobs of the quota (Not in Quota)", &QuotaUse::idle_jobs},
        {"idletime_quota_pending_jobs", "pending jobs of the quota", &QuotaUse::pending_jobs}};
    for (const J &j : jobs) {
        w.family(j.name, "gauge", j.help);
        for (const QuotaUse &q : a.quotas)
            w.sample(j.name, {{"tenant", q.tenant}, {"pool", q.pool}, {"quota", q.quota->name}}, double(q.*j.n));
    }
}

void pool_series(Writer &w, const Accounting &a) {
    static const std::pair<const char *, Amount PoolUse::*> fields[] = {
        {"capacity", &PoolUse::capacity}, {"guaranteed", &PoolUse::guaranteed}, {"used", &PoolUse::used},
        {"idle_used", &PoolUse::idle_used}, {"unassigned", &PoolUse::unassigned}, {"own_idle", &PoolUse::own},
        {"lent", &PoolUse::lent}, {"borrowed", &PoolUse::borrowed}, {"pending", &PoolUse::pending}};
    for (auto [field, member] : fields) {
        std::string name = std::string("idletime_pool_") + field + "_gpus";
        w.family(name, "gauge", ("GPUs of the pool: " + std::string(field) + " (idletime quota, pools)").c_str());
        for (const PoolUse &p : a.pools)
            w.sample(name, {{"tenant", p.pool->tenant}, {"pool", p.pool->name}}, double((p.*member).gpus));
    }
    static const std::pair<const char *, Amount TenantUse::*> tfields[] = {
        {"capacity", &TenantUse::capacity}, {"guaranteed", &TenantUse::guaranteed}, {"used", &TenantUse::used},
        {"idle_used", &TenantUse::idle_used}, {"lent", &TenantUse::lent}, {"borrowed", &TenantUse::borrowed},
        {"pending", &TenantUse::pending}};
    for (auto [field, member] : tfields) {
        std::string name = std::string("idletime_tenant_") + field + "_gpus";
        w.family(name, "gauge", ("GPUs of the tenant: " + std::string(field) + " (idletime quota, tenants)").c_str());
        for (const TenantUse &t : a.tenants) w.sample(name, {{"tenant", t.tenant}}, double((t.*member).gpus));
    }
}

bool idle_mode(const std::string &mode) { return mode == "only" || mode == "acceptable"; }

// Job counts by quota, requested mode and status; idle-time jobs running and pending per quota.
void job_series(Writer &w, const Accounting &a, const std::vector<JobView> &jobs) {
    std::map<std::tuple<std::string, std::string, std::string>, uint64_t> by;
    std::map<std::string, std::pair<uint64_t, uint64_t>> idle;  // quota -> running, pending
    for (const QuotaUse &q : a.quotas) idle[q.quota->name];
    for (const JobView &v : jobs) {
        if (v.quota.empty()) continue;
        by[{v.quota, v.mode.empty() ? "unknown" : v.mode, status_key(v.status)}]++;
        if (!idle.count(v.quota)) continue;
        if (v.status == Status::Running && v.resources == Resources::NotInQuota) idle[v.quota].first++;
        else if (v.job->state == SlurmState::Pending && idle_mode(v.mode)) idle[v.quota].second++;
    }
    w.family("idletime_jobs", "gauge", "jobs slurmctld holds, by quota, requested mode and status (idletime jobs)");
    for (const auto &[k, n] : by)
        w.sample("idletime_jobs", {{"quota", std::get<0>(k)}, {"mode", std::get<1>(k)}, {"status", std::get<2>(k)}},
                 double(n));
    w.family("idletime_idle_jobs", "gauge",
             "idle-time jobs per quota: running on idle capacity, or pending with --idle-resources only|acceptable");
    for (const auto &[q, n] : idle) {
        w.sample("idletime_idle_jobs", {{"quota", q}, {"state", "running"}}, double(n.first));
        w.sample("idletime_idle_jobs", {{"quota", q}, {"state", "pending"}}, double(n.second));
    }
}

struct History {
    std::map<std::pair<std::string, std::string>, uint64_t> preempt;  // quota, reclaimed_by
    std::map<std::pair<std::string, std::string>, uint64_t> restarts; // quota, cause
    std::map<std::string, std::pair<uint64_t, uint64_t>> counters;    // quota -> preemptions, failures
    Histogram resume_wait, owner_wait, work_lost, ckpt_age;
    std::map<std::string, uint64_t> no_ckpt;                           // quota -> running without one
};

void one_job_history(const JobView &v, const ft::JobState &st, const std::map<uint32_t, const JobView *> &by_id,
                     std::set<uint32_t> &owners, History &h) {
    for (const ft::RunRecord &r : st.history) {
        if (r.action == "restart") {
            const char *cause = restart_cause(r.kind);
            if (*cause) h.restarts[{v.quota, cause}]++;
        }
        if (r.kind != "preempt") continue;
        h.preempt[{v.quota, r.quota.empty() ? "unknown" : r.quota}]++;
        if (r.ckpt > 0 && r.ended >= r.ckpt) h.work_lost.observe(double(r.ended - r.ckpt));
        auto it = r.by ? by_id.find(r.by) : by_id.end();
        if (it != by_id.end() && owners.insert(r.by).second) {
            const JobInfo &o = *it->second->job;
            if (o.state != SlurmState::Pending && o.start_time >= o.submit_time && o.submit_time > 0)
                h.owner_wait.observe(double(o.start_time - o.submit_time));
        }
    }
    // The current run resumed after the newest preemption: free (judged) -> running again.
    if (!st.history.empty() && v.job->state != SlurmState::Pending) {
        const ft::RunRecord &r = st.history.back();
        if (r.kind == "preempt" && r.run + 1 == v.job->restart_cnt && v.job->start_time >= r.ended && r.ended > 0)
            h.resume_wait.observe(double(v.job->start_time - r.ended));
    }
}

History history(const std::vector<JobView> &jobs, int64_t now) {
    History h;
    std::map<uint32_t, const JobView *> by_id;
    for (const JobView &v : jobs) by_id[v.job->job_id] = &v;
    std::set<uint32_t> owners;
    for (const JobView &v : jobs) {
        if (v.quota.empty()) continue;
        auto &c = h.counters[v.quota];
        c.first += v.preemptions;
        c.second += v.failures;
        if (v.status == Status::Running && v.resources == Resources::NotInQuota) {
            int64_t t = published_checkpoint(v.job->comment);
            if (t > 0) h.ckpt_age.observe(double(now > t ? now - t : 0));
            else h.no_ckpt[v.quota]++;
        }
        ft::JobState st;
        std::string err;
        if (v.job->admin_comment.rfind(ft::kStatePrefix, 0) == 0 && ft::state_parse(v.job->admin_comment, st, err))
            one_job_history(v, st, by_id, owners, h);
    }
    return h;
}

void history_series(Writer &w, const Accounting &a, const History &h) {
    w.family("idletime_job_preemptions", "gauge", "preemptions counted on the jobs slurmctld holds, per quota");
    w.family("idletime_job_failures", "gauge", "failure restarts counted on the jobs slurmctld holds, per quota");
    for (const QuotaUse &q : a.quotas) {
        auto it = h.counters.find(q.quota->name);
        auto c = it == h.counters.end() ? std::pair<uint64_t, uint64_t>{0, 0} : it->second;
        w.sample("idletime_job_preemptions", {{"quota", q.quota->name}}, double(c.first));
    }
    for (const QuotaUse &q : a.quotas) {
        auto it = h.counters.find(q.quota->name);
        w.sample("idletime_job_failures", {{"quota", q.quota->name}},
                 double(it == h.counters.end() ? 0 : it->second.second));
    }
    w.family("idletime_recorded_preemptions", "gauge",
             "preemptions in the fault-tolerance history of held jobs, by victim quota and reclaiming quota");
    for (const auto &[k, n] : h.preempt)
        w.sample("idletime_recorded_preemptions", {{"quota", k.first}, {"reclaimed_by", k.second}}, double(n));
    w.family("idletime_recorded_restarts", "gauge",
             "restarts in the fault-tolerance history of held jobs, by quota and cause");
    for (const auto &[k, n] : h.restarts)
        w.sample("idletime_recorded_restarts", {{"quota", k.first}, {"cause", k.second}}, double(n));
    w.family("idletime_idle_running_without_checkpoint", "gauge",
             "running idle-time jobs that have published no checkpoint yet, per quota");
    for (const QuotaUse &q : a.quotas) {
        auto it = h.no_ckpt.find(q.quota->name);
        w.sample("idletime_idle_running_without_checkpoint", {{"quota", q.quota->name}},
                 double(it == h.no_ckpt.end() ? 0 : it->second));
    }
    w.histogram("idletime_checkpoint_age_seconds", "age of the newest checkpoint of each running idle-time job",
                h.ckpt_age);
    w.histogram("idletime_resume_wait_seconds",
                "preempted run judged (GPUs free) to the job running again, newest resume of each held job",
                h.resume_wait);
    w.histogram("idletime_owner_wait_seconds",
                "submission to start of each held job that reclaimed GPUs from an idle-time job", h.owner_wait);
    w.histogram("idletime_work_lost_seconds",
                "preempted run's end minus its newest checkpoint, per preemption in the history of held jobs",
                h.work_lost);
}

}  // namespace

std::string metrics_text(const Accounting &a, const std::vector<JobView> &jobs, int64_t now,
                         const ScrapeInfo &info) {
    Writer w;
    w.family("idletime_up", "gauge", "1 when slurmctld answered this scrape's job query, else 0");
    w.sample("idletime_up", {}, info.slurm_up ? 1 : 0);
    w.family("idletime_build_info", "gauge", "version of idletime-exporter");
    w.sample("idletime_build_info", {{"version", info.version}}, 1);
    w.family("idletime_scrape_slurm_seconds", "gauge", "time this scrape spent loading jobs from slurmctld");
    w.sample("idletime_scrape_slurm_seconds", {}, info.load_seconds);
    w.family("idletime_slurm_jobs", "gauge", "all jobs slurmctld holds (idletime's and the site's own)");
    w.sample("idletime_slurm_jobs", {}, double(jobs.size()));
    if (!info.slurm_up) return w.take();  // no numbers rather than zeros that look real
    quota_series(w, a);
    pool_series(w, a);
    job_series(w, a, jobs);
    history_series(w, a, history(jobs, now));
    return w.take();
}

}  // namespace idletime::views
