// idletime jobs --events JOBID: one job's runs, from slurmdbd's records (slurmdb_jobs_get with
// duplicates) joined with the fault-tolerance record (AdminComment) by Slurm restart number.
#include <json-c/json.h>
#include <unistd.h>

#include <ctime>
#include <iostream>

#include "ft/ft.hpp"
#include "tools/views/slurm_read.hpp"
#include "views/output.hpp"

namespace {

using namespace idletime;
using namespace idletime::views;

std::string when(int64_t t) {
    if (t <= 0) return "-";
    char b[32];
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%S", &tm);
    return b;
}

struct Run {
    slurmread::RunRow row;
    Resources res = Resources::None;
    std::string ended;  // how the run ended, in words
    std::string cause;  // why, as a key (see cause_of), "" while it runs
    std::string quota;  // reclaimed: the quota that took the resources, "" = unknown
    uint32_t by = 0;    // reclaimed: the preempting job, 0 = unknown
    std::string nodes;
    int64_t resumed_from = 0;  // checkpoint (time taken) this run resumed from, 0 = none known
};

// Why a run ended, as a key: reclaimed, time-limit, node-failure, requeue (owner or admin),
// hung, failure, cancelled, succeeded; "" while it runs or waits.
std::string cause_of(const slurmread::RunRow &r, const ft::RunRecord *rec) {
    if (rec) {
        if (rec->kind == "preempt") return "reclaimed";
        if (rec->kind == "timeout") return "time-limit";
        if (rec->kind == "node") return "node-failure";
        if (rec->kind == "requeue") return "requeue";
        if (rec->kind == "hung") return "hung";
        if (rec->kind == "cancel") return "cancelled";
        if (rec->kind == "ok") return "succeeded";
        return "failure";
    }
    if (r.state == "PREEMPTED") return "reclaimed";
    if (r.state == "TIMEOUT") return "time-limit";
    if (r.state == "NODE_FAIL") return "node-failure";
    if (r.state == "REQUEUED") return "requeue";
    if (r.state == "FAILED" || r.state == "OUT_OF_MEMORY") return "failure";
    if (r.state == "COMPLETED") return "succeeded";
    if (r.state == "CANCELLED") return "cancelled";
    return "";
}

std::string reclaimed_text(const ft::RunRecord *rec) {
    if (!rec || rec->quota.empty()) return "preempted: reclaimed by a quota (preempting job unknown)";
    return "preempted: reclaimed by quota " + rec->quota +
           (rec->by ? " (job " + std::to_string(rec->by) + ")" : std::string());
}

// How a run ended: the FT record's cause when it judged that run, else Slurm's state.
std::string ending(const slurmread::RunRow &r, const ft::RunRecord *rec) {
    if (rec) {
        if (rec->kind == "preempt") return reclaimed_text(rec);
        if (rec->kind == "timeout")
            return rec->action == "restart" ? "time limit: requeued (--requeue-at-time-limit)"
                                            : "time limit: ended TIMEOUT";
        if (rec->kind == "requeue") return "admin requeue: " + rec->reason;
        if (rec->kind == "hung") return "hung: " + rec->reason + " -> " + rec->action;
        if (rec->kind == "node") return "node failure: " + rec->reason + " -> " + rec->action;
        if (rec->kind == "ok") return "succeeded";
        return "failed: " + rec->reason + " -> " + rec->action;
    }
    if (r.state == "PREEMPTED") return reclaimed_text(nullptr);
    if (r.state == "TIMEOUT") return "time limit: ended TIMEOUT";
    if (r.state == "REQUEUED") return "requeued";
    if (r.state == "NODE_FAIL") return "node failure";
    if (r.state == "FAILED") return "failed: exit code " + std::to_string((r.wait_status >> 8) & 0xff);
    if (r.state == "COMPLETED") return "succeeded";
    if (r.state == "CANCELLED") return "cancelled";
    if (r.state == "RUNNING") return "running";
    if (r.state == "PENDING") return "waiting";
    return r.state;
}

std::vector<Run> runs_of(const Catalog &cat, const std::vector<slurmread::RunRow> &rows, const ft::JobState &st,
                         bool op) {
    std::vector<Run> out;
    uint32_t n = 0;
    for (const slurmread::RunRow &r : rows) {
        if (r.start <= 0 && r.state != "PENDING") continue;  // never started
        Run x;
        x.row = r;
        std::string pool;
        if (r.start > 0) x.res = cat.partition_kind(r.partition, pool);
        const ft::RunRecord *rec = nullptr;
        for (const ft::RunRecord &h : st.history) {
            if (h.run == n) rec = &h;
            if (r.start > 0 && n > 0 && h.run + 1 == n) x.resumed_from = h.ckpt;  // newest at the previous end
        }
        x.ended = ending(r, rec);
        x.cause = cause_of(r, rec);
        if (x.cause == "reclaimed" && rec) x.quota = rec->quota, x.by = rec->by;
        x.nodes = x.res == Resources::NotInQuota && !op ? kHiddenNodes : r.nodes;
        if (r.start > 0) n++;
        out.push_back(x);
    }
    return out;
}

void print_text(uint32_t id, const std::vector<Run> &runs, const ft::JobState &st, bool have_ft, int64_t ckpt) {
    std::vector<std::vector<std::string>> rows{
        {"RUN", "START", "END", "PARTITION", "RESOURCES", "GPUS", "NODES", "RESUMED_FROM", "ENDED"}};
    int n = 0;
    for (const Run &r : runs) {
        bool started = r.row.start > 0;
        rows.push_back({started ? std::to_string(n) : "-", when(r.row.start), when(r.row.end),
                        r.row.partition.empty() ? "-" : r.row.partition,
                        resources_name(r.res)[0] ? resources_name(r.res) : "-", std::to_string(r.row.gpus),
                        r.nodes.empty() ? "-" : r.nodes, when(r.resumed_from), r.ended});
        n += started;
    }
    std::cout << "Job " << id << ": " << st.counters.preemptions << " preemptions, " << st.counters.failures
              << " failure restarts, " << st.counters.time_limits << " time-limit requeues"
              << (st.mode.empty() ? "" : ", requested --idle-resources=" + st.mode)
              << (have_ft ? "" : " (no fault-tolerance record)") << "\n";
    if (!st.final_reason.empty()) std::cout << "Not restarted: " << st.final_reason << "\n";
    std::cout << "Newest checkpoint: " << (ckpt ? when(ckpt) : "none published") << "\n";
    std::cout << columns(rows);
}

void print_json(uint32_t id, const std::vector<Run> &runs, const ft::JobState &st, bool have_ft, int64_t ckpt) {
    json_object *o = json_object_new_object();
    json_object_object_add(o, "schema_version", json_object_new_int(kSchemaVersion));
    json_object_object_add(o, "job_id", json_object_new_int64(id));
    json_object_object_add(o, "ft_record", json_object_new_boolean(have_ft));
    json_object_object_add(o, "preemptions", json_object_new_int64(st.counters.preemptions));
    json_object_object_add(o, "failures", json_object_new_int64(st.counters.failures));
    json_object_object_add(o, "time_limits", json_object_new_int64(st.counters.time_limits));
    json_object_object_add(o, "mode", st.mode.empty() ? nullptr : json_object_new_string(st.mode.c_str()));
    json_object_object_add(o, "final_reason",
                           st.final_reason.empty() ? nullptr : json_object_new_string(st.final_reason.c_str()));
    json_object_object_add(o, "newest_checkpoint", ckpt ? json_object_new_int64(ckpt) : nullptr);
    json_object *arr = json_object_new_array();
    for (const Run &r : runs) {
        json_object *e = json_object_new_object();
        json_object_object_add(e, "start_time", json_object_new_int64(r.row.start));
        json_object_object_add(e, "end_time", json_object_new_int64(r.row.end));
        json_object_object_add(e, "partition", json_object_new_string(r.row.partition.c_str()));
        json_object_object_add(e, "resources", json_object_new_string(resources_key(r.res)));
        json_object_object_add(e, "gpus", json_object_new_int64(r.row.gpus));
        json_object_object_add(e, "nodes", json_object_new_string(r.nodes.c_str()));
        json_object_object_add(e, "slurm_state", json_object_new_string(r.row.state.c_str()));
        json_object_object_add(e, "ended", json_object_new_string(r.ended.c_str()));
        json_object_object_add(e, "reason", r.cause.empty() ? nullptr : json_object_new_string(r.cause.c_str()));
        json_object_object_add(e, "reclaimed_by_quota",
                               r.quota.empty() ? nullptr : json_object_new_string(r.quota.c_str()));
        json_object_object_add(e, "preempted_by_job", r.by ? json_object_new_int64(r.by) : nullptr);
        json_object_object_add(e, "resumed_from_checkpoint",
                               r.resumed_from ? json_object_new_int64(r.resumed_from) : nullptr);
        json_object_array_add(arr, e);
    }
    json_object_object_add(o, "runs", arr);
    std::cout << json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED) << "\n";
    json_object_put(o);
}

}  // namespace

int events_main(const Config &cfg, uint32_t job_id, bool json) {
    std::string err, why;
    JobInfo j;
    bool live = slurmread::load_job(job_id, j, err);
    std::vector<slurmread::RunRow> rows;
    std::string dberr;
    if (!slurmread::job_runs(job_id, rows, dberr) && !live) {
        std::cerr << "idletime jobs: --events " << job_id << ": " << err << "; " << dberr << "\n";
        return 1;
    }
    if (rows.empty() && !live) return std::cerr << "idletime jobs: --events: job " << job_id << " not found\n", 1;
    // The newest record: slurmctld's, or the final one only accounting holds once the job ended.
    const std::string record = newest_record(live ? j.admin_comment : std::string(),
                                              rows.empty() ? std::string() : rows.back().admin_comment);
    ft::JobState st;
    bool have_ft = !record.empty() && ft::state_parse(record, st, err);
    if (!have_ft) st = ft::JobState{};
    int64_t ckpt = live ? published_checkpoint(j.comment) : 0;
    Catalog cat(cfg);
    std::vector<Run> runs = runs_of(cat, rows, st, slurmread::is_operator(getuid(), why));
    if (json) print_json(job_id, runs, st, have_ft, ckpt);
    else print_text(job_id, runs, st, have_ft, ckpt);
    return 0;
}
