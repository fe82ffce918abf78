#include "views/job.hpp"

#include <algorithm>
#include <cctype>

#include "core/resolve.hpp"

namespace idletime::views {
namespace {

struct StatusName {
    Status s;
    const char *name, *key;
};
constexpr StatusName kStatus[] = {
    {Status::Queuing, "Queuing", "queuing"},
    {Status::Running, "Running", "running"},
    {Status::ResourcePreempted, "Resource Preempted", "resource-preempted"},
    {Status::Restarting, "Restarting", "restarting"},
    {Status::Succeeded, "Succeeded", "succeeded"},
    {Status::Failed, "Failed", "failed"},
    {Status::Stopped, "Stopped", "stopped"},
};

std::string lower_dashed(const std::string &s) {
    std::string out;
    for (char c : s) out += c == ' ' ? '-' : char(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// Why a run that Slurm ended in a final state failed, when the FT record does not say.
std::string slurm_failure(const JobInfo &j) {
    switch (j.state) {
    case SlurmState::Timeout: return "time limit reached";
    case SlurmState::NodeFail: return "node failure";
    case SlurmState::OutOfMemory: return "out of memory";
    case SlurmState::BootFail: return "node boot failure";
    case SlurmState::Deadline: return "deadline reached";
    default: break;
    }
    int st = j.wait_status;
    if (st & 0x7f) return "killed by signal " + std::to_string(st & 0x7f);
    return "exit code " + std::to_string((st >> 8) & 0xff);
}

// Pending job: Queuing, Resource Preempted (last run preempted) or Restarting (failure backoff).
Status pending_status(const JobInfo &j, const ft::JobState &st, bool has_ft, int64_t now, std::string &why) {
    if (!has_ft || st.history.empty()) return Status::Queuing;
    const ft::RunRecord &last = st.history.back();
    if (last.kind == "preempt") {
        why = last.reason;
        return Status::ResourcePreempted;
    }
    if (last.action == "restart") {
        int64_t begin = std::max(j.eligible_time, st.begin_at);
        if (begin > now) {
            why = last.reason + "; restarts in " + format_age(begin - now);
            return Status::Restarting;
        }
    }
    return Status::Queuing;
}

Status final_status(const JobInfo &j, const ft::JobState &st, std::string &why) {
    if (!st.final_reason.empty()) {
        why = st.final_reason;
        return Status::Failed;
    }
    switch (j.state) {
    case SlurmState::Complete: return Status::Succeeded;
    case SlurmState::Cancelled: why = "cancelled"; return Status::Stopped;
    case SlurmState::Preempted: why = "preempted, not requeued"; return Status::ResourcePreempted;
    default: why = slurm_failure(j); return Status::Failed;
    }
}

}  // namespace

const char *status_name(Status s) {
    for (const StatusName &n : kStatus)
        if (n.s == s) return n.name;
    return "?";
}

const char *status_key(Status s) {
    for (const StatusName &n : kStatus)
        if (n.s == s) return n.key;
    return "?";
}

bool status_parse(const std::string &text, Status &out) {
    std::string k = lower_dashed(text);
    for (const StatusName &n : kStatus)
        if (k == n.key) {
            out = n.s;
            return true;
        }
    return false;
}

const char *resources_name(Resources r) {
    switch (r) {
    case Resources::InQuota: return "In Quota";
    case Resources::NotInQuota: return "Not in Quota";
    default: return "";
    }
}

const char *resources_key(Resources r) {
    switch (r) {
    case Resources::InQuota: return "in-quota";
    case Resources::NotInQuota: return "not-in-quota";
    case Resources::Other: return "other";
    case Resources::None: break;
    }
    return "none";
}

std::string part_key(const std::string &account, std::vector<std::string> parts) {
    std::sort(parts.begin(), parts.end());
    parts.erase(std::unique(parts.begin(), parts.end()), parts.end());
    std::string k = account;
    for (const std::string &p : parts) k += "|" + p;
    return k;
}

Catalog::Catalog(const Config &cfg) : cfg_(cfg) {
    for (const Quota &q : cfg.quotas) {
        parts_[quota_partition(q)] = {Resources::InQuota, q.pool};
        for (const std::string &acct : q.accounts)
            for (Mode m : {Mode::None, Mode::Acceptable, Mode::Only}) {
                Resolution r;
                std::string err;
                if (!resolve(cfg, Request{q.name, acct, m, ""}, r, err)) continue;
                std::vector<std::string> parts;
                for (const Target &t : r.targets) parts.push_back(t.partition);
                by_key_.emplace(part_key(acct, parts), std::make_pair(q.name, std::string(mode_name(m))));
                if (m == Mode::Acceptable) reach_.emplace(acct, std::make_pair(q.name, parts));
            }
    }
    for (const Pool &p : cfg.pools) parts_[idle_partition(p)] = {Resources::NotInQuota, p.name};
}

bool Catalog::quota_mode(const std::string &account, const std::vector<std::string> &partitions,
                         std::string &quota, std::string &mode) const {
    auto it = by_key_.find(part_key(account, partitions));
    quota.clear();
    mode.clear();
    if (it != by_key_.end()) {
        quota = it->second.first;
        mode = it->second.second;
        return true;
    }
    if (partitions.empty()) return false;
    auto [lo, hi] = reach_.equal_range(account);
    int found = 0;
    for (auto r = lo; r != hi; ++r) {
        const std::vector<std::string> &all = r->second.second;
        bool inside = true;
        for (const std::string &p : partitions) inside = inside && std::find(all.begin(), all.end(), p) != all.end();
        if (inside) quota = r->second.first, found++;
    }
    if (found != 1) return quota.clear(), false;
    bool q = false, idle = false;
    for (const std::string &p : partitions) (quota_of_partition(p).empty() ? idle : q) = true;
    mode = q && idle ? "acceptable" : q ? "none" : "only";
    return true;
}

Resources Catalog::partition_kind(const std::string &partition, std::string &pool) const {
    auto it = parts_.find(partition);
    if (it == parts_.end()) {
        pool.clear();
        return Resources::Other;
    }
    pool = it->second.second;
    return it->second.first;
}

JobView derive(const Catalog &cat, const JobInfo &j, int64_t now, bool operator_view) {
    const Config &cfg = cat.config();
    JobView v;
    v.job = &j;
    cat.quota_mode(j.account, j.partitions, v.quota, v.mode);
    if (const Quota *q = cfg.quota(v.quota))
        if (const Pool *p = cfg.pool_of(*q)) v.tenant = p->tenant;
    ft::JobState st;
    std::string err;
    const bool parsed = !j.admin_comment.empty() && ft::state_parse(j.admin_comment, st, err);
    // What the user asked for survives start (Slurm narrows the partitions then).
    if (parsed && (st.mode == "none" || st.mode == "acceptable" || st.mode == "only")) v.mode = st.mode;
    // job_submit's stamp alone (no run judged yet) is no record of restarts.
    v.ft_record = parsed && (st.judged_start != -1 || !st.history.empty());
    if (v.ft_record) {
        v.preemptions = st.counters.preemptions;
        v.time_limits = st.counters.time_limits;
        v.failures = st.counters.failures + st.counters.time_limits;
    } else {
        st = ft::JobState{};
        v.failures = j.restart_cnt;  // without a record Slurm's count cannot be split
    }
    bool running = j.state == SlurmState::Running || j.state == SlurmState::Suspended;
    if (running) {
        v.status = Status::Running;
        if (j.preempt_time > 0) v.reason = "preemption notice received";
        if (!j.partitions.empty()) v.resources = cat.partition_kind(j.partitions.front(), v.pool);
    } else if (j.state == SlurmState::Pending) {
        v.status = pending_status(j, st, v.ft_record, now, v.reason);
        if (v.status == Status::Queuing) v.reason = j.state_reason;
    } else {
        v.status = final_status(j, st, v.reason);
    }
    v.nodes = running ? j.nodes : "";
    if (v.resources == Resources::NotInQuota && !operator_view && !v.nodes.empty()) v.nodes = kHiddenNodes;
    v.age_s = j.submit_time > 0 && now > j.submit_time ? now - j.submit_time : 0;
    return v;
}

uint32_t tres_count(const std::string &tres, const std::string &name) {
    size_t pos = 0;
    while (pos < tres.size()) {
        size_t end = tres.find(',', pos);
        if (end == std::string::npos) end = tres.size();
        std::string item = tres.substr(pos, end - pos);
        size_t eq = item.find('=');
        if (eq != std::string::npos && item.compare(0, eq, name) == 0 && eq == name.size())
            return uint32_t(std::strtoul(item.c_str() + eq + 1, nullptr, 10));
        pos = end + 1;
    }
    return 0;
}

uint32_t tres_gpus(const std::string &tres) {
    if (uint32_t n = tres_count(tres, "gres/gpu")) return n;
    uint32_t sum = 0;  // only typed entries: add them up
    size_t pos = 0;
    while ((pos = tres.find("gres/gpu:", pos)) != std::string::npos) {
        size_t eq = tres.find('=', pos);
        if (eq == std::string::npos) break;
        sum += uint32_t(std::strtoul(tres.c_str() + eq + 1, nullptr, 10));
        pos = eq;
    }
    return sum;
}

const std::string &newest_record(const std::string &live, const std::string &accounting) {
    ft::JobState a, l;
    std::string err;
    if (accounting.empty() || !ft::state_parse(accounting, a, err)) return live;
    if (live.empty() || !ft::state_parse(live, l, err)) return accounting;
    return a.judged_start > l.judged_start ? accounting : live;
}

int64_t published_checkpoint(const std::string &comment) {
    static const std::string tok = "idletime:ckpt=";
    auto sep = [](char c) { return c == ' ' || c == '\t' || c == ',' || c == ';' || c == '\n'; };
    for (size_t pos = comment.find(tok); pos != std::string::npos; pos = comment.find(tok, pos + 1)) {
        if (pos > 0 && !sep(comment[pos - 1])) continue;
        size_t b = pos + tok.size(), e = b;
        while (e < comment.size() && std::isdigit(static_cast<unsigned char>(comment[e]))) e++;
        if (e == b || e - b > 18 || (e < comment.size() && !sep(comment[e]))) continue;
        return std::stoll(comment.substr(b, e - b));
    }
    return 0;
}

std::string format_age(int64_t s) {
    if (s < 0) s = 0;
    auto two = [](int64_t n) { return (n < 10 ? "0" : "") + std::to_string(n); };
    if (s >= 86400) return std::to_string(s / 86400) + "d" + two(s % 86400 / 3600) + "h";
    if (s >= 3600) return std::to_string(s / 3600) + "h" + two(s % 3600 / 60) + "m";
    if (s >= 60) return std::to_string(s / 60) + "m" + two(s % 60) + "s";
    return std::to_string(s) + "s";
}

}  // namespace idletime::views
