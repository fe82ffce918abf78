#include "views/output.hpp"

#include <json-c/json.h>

#include <cstring>

namespace idletime::views {
namespace {

struct Field {
    char letter;
    const char *header;
};
constexpr Field kFields[] = {
    {'i', "JOBID"},  {'j', "NAME"},    {'u', "USER"},      {'a', "ACCOUNT"},   {'q', "QUOTA"},
    {'t', "TENANT"}, {'m', "MODE"},    {'T', "STATUS"},    {'R', "RESOURCES"}, {'b', "GPUS"},
    {'C', "CPUS"},   {'r', "RESTARTS(P/F)"}, {'M', "AGE"}, {'N', "NODES"},     {'P', "PARTITION"},
    {'p', "POOL"},   {'e', "REASON"},  {'V', "SUBMIT_TIME"}, {'S', "START_TIME"},
};
constexpr char kDefault[] = "ijuqmTRbrMN";

const char *header_of(char f) {
    for (const Field &x : kFields)
        if (x.letter == f) return x.header;
    return nullptr;
}

std::string dash(const std::string &s) { return s.empty() ? "-" : s; }

std::string pad(const std::string &s, size_t w, bool right) {
    if (s.size() >= w) return s;
    return right ? std::string(w - s.size(), ' ') + s : s + std::string(w - s.size(), ' ');
}

json_object *str(const std::string &s) { return json_object_new_string_len(s.data(), int(s.size())); }
json_object *str_or_null(const std::string &s) { return s.empty() ? nullptr : str(s); }
void put(json_object *o, const char *k, json_object *v) { json_object_object_add(o, k, v); }
void put_i(json_object *o, const char *k, int64_t v) { put(o, k, json_object_new_int64(v)); }

std::string dump(json_object *o) {
    std::string s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                          JSON_C_TO_STRING_NOSLASHESCAPE);
    json_object_put(o);
    return s + "\n";
}

json_object *root(int64_t now) {
    json_object *o = json_object_new_object();
    put_i(o, "schema_version", kSchemaVersion);
    put_i(o, "generated_at", now);
    return o;
}

json_object *job_json(const JobView &v) {
    const JobInfo &j = *v.job;
    json_object *o = json_object_new_object();
    put_i(o, "job_id", j.job_id);
    put(o, "name", str(j.name));
    put(o, "user", str(j.user));
    put(o, "account", str(j.account));
    put(o, "quota", str_or_null(v.quota));
    put(o, "tenant", str_or_null(v.tenant));
    put(o, "mode", str_or_null(v.mode));
    put(o, "status", str(status_key(v.status)));
    put(o, "status_text", str(status_name(v.status)));
    put(o, "reason", str_or_null(v.reason));
    put(o, "resources", str(resources_key(v.resources)));
    put(o, "resources_text", str(resources_name(v.resources)));
    put(o, "pool", str_or_null(v.pool));
    put_i(o, "gpus", j.gpus);
    put_i(o, "cpus", j.cpus);
    json_object *r = json_object_new_object();
    put_i(r, "preemptions", v.preemptions);
    put_i(r, "failures", v.failures);
    put_i(r, "time_limits", v.time_limits);
    put(r, "source", str(v.ft_record ? "ft-record" : "slurm"));
    put(o, "restarts", r);
    put_i(o, "submit_time", j.submit_time);
    put_i(o, "start_time", v.status == Status::Running ? j.start_time : 0);
    put_i(o, "age_s", v.age_s);
    put(o, "nodes", str_or_null(v.nodes));
    put(o, "nodes_hidden", json_object_new_boolean(v.nodes == kHiddenNodes));
    json_object *parts = json_object_new_array();
    for (const std::string &p : j.partitions) json_object_array_add(parts, str(p));
    put(o, "partitions", parts);
    return o;
}

json_object *amount(const Amount &a) {
    json_object *o = json_object_new_object();
    put_i(o, "gpus", int64_t(a.gpus));
    put_i(o, "cpus", int64_t(a.cpus));
    return o;
}

std::string gc(const Amount &a) { return std::to_string(a.gpus) + "/" + std::to_string(a.cpus); }

}  // namespace

const char *const kFieldHelp =
    "%i job id, %j name, %u user, %a account, %q quota, %t tenant, %m mode, %T status, %R real-time "
    "resources, %b GPUs, %C CPUs, %r restarts P/F, %M age, %N nodes, %P partition, %p pool, %e reason, "
    "%V submit time, %S start time";

bool format_parse(const std::string &fmt, std::vector<FormatItem> &out, std::string &err) {
    out.clear();
    FormatItem cur;
    for (size_t i = 0; i < fmt.size(); i++) {
        if (fmt[i] != '%') {
            cur.literal += fmt[i];
            continue;
        }
        if (++i < fmt.size() && fmt[i] == '%') {
            cur.literal += '%';
            continue;
        }
        if (i < fmt.size() && (fmt[i] == '.' || fmt[i] == '-')) cur.right = fmt[i++] == '.';
        while (i < fmt.size() && fmt[i] >= '0' && fmt[i] <= '9') cur.width = cur.width * 10 + size_t(fmt[i++] - '0');
        if (i >= fmt.size() || !header_of(fmt[i])) {
            err = "--format: unknown field \"%" + (i < fmt.size() ? std::string(1, fmt[i]) : std::string()) +
                  "\" (allowed: " + kFieldHelp + ")";
            return false;
        }
        cur.field = fmt[i];
        out.push_back(cur);
        cur = FormatItem{};
    }
    if (!cur.literal.empty()) out.push_back(cur);
    return true;
}

std::string job_field(const JobView &v, char field) {
    const JobInfo &j = *v.job;
    switch (field) {
    case 'i': return std::to_string(j.job_id);
    case 'j': return j.name;
    case 'u': return j.user;
    case 'a': return j.account;
    case 'q': return dash(v.quota);
    case 't': return dash(v.tenant);
    case 'm': return dash(v.mode);
    case 'T': return v.status == Status::Failed && !v.reason.empty() ? "Failed (" + v.reason + ")" : status_name(v.status);
    case 'R': return dash(resources_name(v.resources));
    case 'b': return std::to_string(j.gpus);
    case 'C': return std::to_string(j.cpus);
    case 'r': return std::to_string(v.preemptions) + "/" + std::to_string(v.failures);
    case 'M': return format_age(v.age_s);
    case 'N': return dash(v.nodes);
    case 'P': return j.partitions.empty() ? "-" : j.partitions.front();
    case 'p': return dash(v.pool);
    case 'e': return dash(v.reason);
    case 'V': return std::to_string(j.submit_time);
    case 'S': return std::to_string(v.status == Status::Running ? j.start_time : 0);
    }
    return "";
}

std::string columns(const std::vector<std::vector<std::string>> &rows) {
    std::vector<size_t> w;
    for (const auto &r : rows)
        for (size_t i = 0; i < r.size(); i++) {
            if (w.size() <= i) w.push_back(0);
            w[i] = std::max(w[i], r[i].size());
        }
    std::string out;
    for (const auto &r : rows) {
        for (size_t i = 0; i < r.size(); i++)
            out += i + 1 == r.size() ? r[i] : pad(r[i], w[i], false) + "  ";
        out += "\n";
    }
    return out;
}

std::string jobs_table(const std::vector<JobView> &jobs, bool header) {
    std::vector<std::vector<std::string>> rows;
    rows.reserve(jobs.size() + 1);
    if (header) {
        rows.emplace_back();
        for (const char *f = kDefault; *f; f++) rows.back().push_back(header_of(*f));
    }
    for (const JobView &v : jobs) {
        rows.emplace_back();
        for (const char *f = kDefault; *f; f++) rows.back().push_back(job_field(v, *f));
    }
    return columns(rows);
}

std::string jobs_formatted(const std::vector<JobView> &jobs, const std::vector<FormatItem> &fmt, bool header) {
    std::string out;
    auto line = [&](auto cell) {
        for (const FormatItem &it : fmt) {
            out += it.literal;
            if (it.field) out += pad(cell(it.field), it.width, it.right);
        }
        out += "\n";
    };
    if (header) line([](char f) { return std::string(header_of(f)); });
    for (const JobView &v : jobs) line([&](char f) { return job_field(v, f); });
    return out;
}

std::string jobs_json(const std::vector<JobView> &jobs, int64_t now) {
    json_object *o = root(now);
    json_object *arr = json_object_new_array_ext(int(jobs.size()));
    for (const JobView &v : jobs) json_object_array_add(arr, job_json(v));
    put(o, "jobs", arr);
    return dump(o);
}

std::string quota_table(const Accounting &a) {
    std::vector<std::vector<std::string>> rows{{"QUOTA", "POOL", "TENANT", "GUARANTEED", "USED", "LENT",
                                                "BORROWED", "PENDING", "JOBS(R/I/P)"}};
    for (const QuotaUse &q : a.quotas)
        rows.push_back({q.quota->name, q.pool, q.tenant, gc(q.guaranteed), gc(q.used), gc(q.lent), gc(q.borrowed),
                        gc(q.pending), std::to_string(q.running_jobs) + "/" + std::to_string(q.idle_jobs) + "/" +
                                           std::to_string(q.pending_jobs)});
    std::string out = "Quotas (GPUs/CPUs):\n" + columns(rows);
    rows = {{"POOL", "TENANT", "CAPACITY", "GUARANTEED", "USED", "IDLE-TIME", "UNASSIGNED", "LENT", "PENDING"}};
    for (const PoolUse &p : a.pools)
        rows.push_back({p.pool->name, p.pool->tenant, gc(p.capacity), gc(p.guaranteed), gc(p.used), gc(p.idle_used),
                        gc(p.unassigned), gc(p.lent), gc(p.pending)});
    out += "\nPools (GPUs/CPUs):\n" + columns(rows);
    rows = {{"TENANT", "CAPACITY", "GUARANTEED", "USED", "IDLE-TIME", "LENT", "BORROWED", "PENDING"}};
    for (const TenantUse &t : a.tenants)
        rows.push_back({t.tenant, gc(t.capacity), gc(t.guaranteed), gc(t.used), gc(t.idle_used), gc(t.lent),
                        gc(t.borrowed), gc(t.pending)});
    return out + "\nTenants (GPUs/CPUs):\n" + columns(rows);
}

std::string quota_json(const Accounting &a, int64_t now) {
    json_object *o = root(now);
    json_object *qs = json_object_new_array();
    for (const QuotaUse &q : a.quotas) {
        json_object *x = json_object_new_object();
        put(x, "name", str(q.quota->name));
        put(x, "pool", str(q.pool));
        put(x, "tenant", str(q.tenant));
        put(x, "guaranteed", amount(q.guaranteed));
        put(x, "used", amount(q.used));
        put(x, "lent", amount(q.lent));
        put(x, "own_idle", amount(q.own));
        put(x, "borrowed", amount(q.borrowed));
        put(x, "pending", amount(q.pending));
        put_i(x, "running_jobs", q.running_jobs);
        put_i(x, "idle_jobs", q.idle_jobs);
        put_i(x, "pending_jobs", q.pending_jobs);
        json_object_array_add(qs, x);
    }
    put(o, "quotas", qs);
    json_object *ps = json_object_new_array();
    for (const PoolUse &p : a.pools) {
        json_object *x = json_object_new_object();
        put(x, "name", str(p.pool->name));
        put(x, "tenant", str(p.pool->tenant));
        for (auto [k, v] : {std::pair{"capacity", &p.capacity}, {"guaranteed", &p.guaranteed}, {"used", &p.used},
                            {"idle_used", &p.idle_used}, {"unassigned", &p.unassigned}, {"own_idle", &p.own}, {"lent", &p.lent},
                            {"borrowed", &p.borrowed}, {"pending", &p.pending}})
            put(x, k, amount(*v));
        json_object_array_add(ps, x);
    }
    put(o, "pools", ps);
    json_object *ts = json_object_new_array();
    for (const TenantUse &t : a.tenants) {
        json_object *x = json_object_new_object();
        put(x, "name", str(t.tenant));
        for (auto [k, v] : {std::pair{"capacity", &t.capacity}, {"guaranteed", &t.guaranteed}, {"used", &t.used},
                            {"idle_used", &t.idle_used}, {"lent", &t.lent}, {"borrowed", &t.borrowed},
                            {"pending", &t.pending}})
            put(x, k, amount(*v));
        json_object_array_add(ts, x);
    }
    put(o, "tenants", ts);
    return dump(o);
}

std::string findings_text(const std::vector<Finding> &f) {
    std::string out;
    for (const Finding &x : f)
        out += std::string(x.severity == Severity::KnownBad ? "known-bad: " : "mismatch: ") + x.object +
               ": cluster has " + x.have + ", config wants " + x.want + "\n    fix: " + x.fix + "\n";
    return out;
}

std::string findings_json(const std::vector<Finding> &f) {
    json_object *o = json_object_new_object();
    put_i(o, "schema_version", kSchemaVersion);
    put(o, "ok", json_object_new_boolean(f.empty()));
    json_object *arr = json_object_new_array();
    for (const Finding &x : f) {
        json_object *e = json_object_new_object();
        put(e, "severity", str(x.severity == Severity::KnownBad ? "known-bad" : "mismatch"));
        put(e, "object", str(x.object));
        put(e, "have", str(x.have));
        put(e, "want", str(x.want));
        put(e, "fix", str(x.fix));
        json_object_array_add(arr, e);
    }
    put(o, "findings", arr);
    return dump(o);
}

}  // namespace idletime::views
