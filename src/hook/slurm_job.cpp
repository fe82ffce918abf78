// libslurm calls behind slurm_job.hpp (public API only; no command output is parsed).
#include "hook/slurm_job.hpp"
#include "core/config.hpp"

#include <slurm/slurm.h>
#include "compat/slurm_api.h"
#include <slurm/slurm_errno.h>
#include <slurm/slurmdb.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>


namespace idletime::slurmjob {
namespace {

thread_local int g_errno = 0;

std::string slurm_err() {
    g_errno = idletime_slurm_errno();
    return slurm_strerror(g_errno);
}

std::vector<std::string> expand(const char *hosts) {
    std::vector<std::string> out;
    if (!hosts || !*hosts) return out;
    idletime_hostlist_t hl = slurm_hostlist_create(hosts);
    if (!hl) return out;
    while (char *h = slurm_hostlist_shift(hl)) {
        out.emplace_back(h);
        free(h);
    }
    slurm_hostlist_destroy(hl);
    return out;
}

ft::JobEnd end_of(uint32_t state) {
    switch (state & JOB_STATE_BASE) {
    case JOB_COMPLETE: return ft::JobEnd::Completed;
    case JOB_CANCELLED: return ft::JobEnd::Cancelled;
    case JOB_FAILED: return ft::JobEnd::Failed;
    case JOB_TIMEOUT: return ft::JobEnd::Timeout;
    case JOB_NODE_FAIL: return ft::JobEnd::NodeFail;
    case JOB_PREEMPTED: return ft::JobEnd::Preempted;
    case JOB_OOM: return ft::JobEnd::OutOfMemory;
    case JOB_PENDING: return ft::JobEnd::Requeued;
    default: return ft::JobEnd::Other;
    }
}

bool update(job_desc_msg_t &d, std::string &err) {
    if (slurm_update_job(&d) != SLURM_SUCCESS) {
        err = slurm_err();
        return false;
    }
    return true;
}

}  // namespace

// A job record as Job (nodes expanded).
namespace {

void fill(const slurm_job_info_t &j, Job &out) {
    out = Job{};
    out.state = j.job_state;
    out.completing = j.job_state & JOB_COMPLETING;
    out.pending = (j.job_state & JOB_STATE_BASE) == JOB_PENDING;
    out.nodes = j.nodes ? j.nodes : "";
    out.begin_time = j.start_time;  // for a pending job: expected start
    out.eligible_time = j.eligible_time;
    out.submit_time = j.submit_time;
    out.user_id = j.user_id;
    out.exc_nodes = j.exc_nodes ? j.exc_nodes : "";
    out.array_meta = j.array_task_str && j.array_task_id == NO_VAL;
    ft::JobSnapshot &s = out.snap;
    s.job_id = j.job_id;
    s.restart_cnt = j.restart_cnt;
    s.end = end_of(j.job_state);
    s.requeued = out.pending || (j.job_state & (JOB_REQUEUE | JOB_REQUEUE_HOLD));
    s.wait_status = int(j.exit_code);
    s.start_time = j.start_time;
    s.preempt_time = j.preempt_time;
    out.system_comment = j.system_comment ? j.system_comment : "";
    s.end_time = j.end_time;
    s.time_limit_s = j.time_limit == INFINITE || j.time_limit == NO_VAL ? 0 : int64_t(j.time_limit) * 60;
    s.admin_comment = j.admin_comment ? j.admin_comment : "";
    s.comment = j.comment ? j.comment : "";
    out.partition = j.partition ? std::string(j.partition).substr(0, std::string(j.partition).find(',')) : "";
    s.nodes = expand(j.nodes);
    s.required_nodes = expand(j.req_nodes);
}

}  // namespace

void init() {
    static std::once_flag once;
    std::call_once(once, [] { slurm_init(nullptr); });
}

// Every job load here is SHOW_LOCAL: the hook runs on the cluster that ran the job, and without
// it libslurm first asks slurmctld for the federation (one RPC more per call, per poll).
bool load(uint32_t job_id, Job &out, std::string &err, bool detail) {
    job_info_msg_t *msg = nullptr;
    const uint16_t show = SHOW_ALL | SHOW_LOCAL | (detail ? SHOW_DETAIL : 0);
    if (idletime_load_job(&msg, job_id, show) != SLURM_SUCCESS) {
        err = slurm_err();
        return false;
    }
    if (!msg || msg->record_count < 1) {
        slurm_free_job_info_msg(msg);
        err = "job not found";
        return false;
    }
    fill(msg->job_array[0], out);
    slurm_free_job_info_msg(msg);
    return true;
}

namespace {

// Every job of the table that keep(record) accepts, as Job (one slurm_load_jobs).
template <class Keep>
bool load_table(std::vector<Job> &out, std::string &err, Keep keep) {
    job_info_msg_t *msg = nullptr;
    out.clear();
    if (slurm_load_jobs(0, &msg, SHOW_ALL | SHOW_LOCAL) != SLURM_SUCCESS) {
        err = slurm_err();
        return false;
    }
    for (uint32_t i = 0; msg && i < msg->record_count; i++) {
        if (!keep(msg->job_array[i])) continue;
        out.emplace_back();
        fill(msg->job_array[i], out.back());
    }
    slurm_free_job_info_msg(msg);
    return true;
}

bool is_pending(const slurm_job_info_t &j) { return (j.job_state & JOB_STATE_BASE) == JOB_PENDING; }

}  // namespace

bool pending_jobs(std::vector<Job> &out, std::string &err) { return load_table(out, err, is_pending); }

bool started_quota_jobs(int64_t since, std::vector<Job> &out, std::string &err) {
    return load_table(out, err, [since](const slurm_job_info_t &j) {
        if (is_pending(j) || j.start_time <= 0 || int64_t(j.start_time) < since || !j.partition) return false;
        const std::string_view list(j.partition);
        return !quota_of_partition(list.substr(0, list.find(','))).empty();
    });
}


void clear_error() { g_errno = 0; }

std::vector<std::string> expand_hosts(const char *hosts) { return expand(hosts); }

bool last_error_final() {
    switch (g_errno) {
    case ESLURM_INVALID_JOB_ID:
    case ESLURM_ACCESS_DENIED:
    case ESLURM_USER_ID_MISSING:
    case ESLURM_ALREADY_DONE:
    case ESLURM_JOB_FINISHED:
    case ESLURM_DISABLED:
    case ESLURM_BATCH_ONLY:
    case ESLURM_INVALID_NODE_NAME:
        return true;
    default:
        return false;
    }
}

bool failed_nodes(const std::vector<std::string> &nodes, std::vector<std::string> &out,
                  std::string &err) {
    out.clear();
    if (nodes.empty()) return true;
    node_info_msg_t *msg = nullptr;
    if (slurm_load_node(0, &msg, SHOW_ALL) != SLURM_SUCCESS) {
        err = slurm_err();
        return false;
    }
    for (uint32_t i = 0; msg && i < msg->record_count; i++) {
        const node_info_t &n = msg->node_array[i];
        if (!n.name) continue;
        const uint32_t st = n.node_state;
        const bool bad = (st & NODE_STATE_BASE) == NODE_STATE_DOWN ||
                         (st & (NODE_STATE_FAIL | NODE_STATE_NO_RESPOND | NODE_STATE_DRAIN));
        for (const auto &want : nodes)
            if (bad && want == n.name) out.push_back(want);
    }
    slurm_free_node_info_msg(msg);
    return true;
}

bool exclude_nodes(uint32_t job_id, const std::string &current, const std::vector<std::string> &add,
                   std::string &err) {
    idletime_hostlist_t hl = slurm_hostlist_create(current.c_str());
    if (!hl) {
        err = "cannot parse the excluded nodes \"" + current + "\"";
        return false;
    }
    for (const auto &n : add)
        if (slurm_hostlist_find(hl, n.c_str()) < 0) slurm_hostlist_push_host(hl, n.c_str());
    // slurm_hostlist_ranged_string is in every supported release (the _malloc variant is not):
    // -1 while the buffer is too small.
    std::string text(256, '\0');
    while (slurm_hostlist_ranged_string(hl, text.size(), text.data()) < 0 && text.size() < (1u << 24))
        text.resize(text.size() * 2);
    slurm_hostlist_destroy(hl);
    text.resize(strnlen(text.c_str(), text.size()));
    job_desc_msg_t d;
    slurm_init_job_desc_msg(&d);
    idletime_desc_set_job_id(&d, job_id);
    d.exc_nodes = text.data();
    return update(d, err);
}

bool set_admin_comment(uint32_t job_id, const std::string &text, std::string &err) {
    job_desc_msg_t d;
    slurm_init_job_desc_msg(&d);
    idletime_desc_set_job_id(&d, job_id);
    d.admin_comment = const_cast<char *>(text.c_str());
    return update(d, err);
}

std::string cluster_name() {
    slurm_conf_t *c = nullptr;
    if (slurm_load_ctl_conf(0, &c) != SLURM_SUCCESS || !c) return "";
    std::string name = c->cluster_name ? c->cluster_name : "";
    idletime_free_ctl_conf(c);
    return name;
}

namespace {

// True once slurmdbd holds the end of the run that started at start (slurmctld sends the end
// record asynchronously and with the job's AdminComment of that moment: writing ours before it
// arrived would be overwritten).
bool run_ended_in_db(void *db, slurmdb_job_cond_t &cond, int64_t start, std::string &err) {
    idletime_list_t jobs = slurmdb_jobs_get(db, &cond);
    if (!jobs) {
        err = "accounting query failed: " + slurm_err();
        return false;
    }
    bool ended = false;
    idletime_list_itr_t it = slurm_list_iterator_create(jobs);
    while (auto *r = static_cast<slurmdb_job_rec_t *>(slurm_list_next(it)))
        if (r->end > 0 && (start <= 0 || r->start == start)) ended = true;
    slurm_list_iterator_destroy(it);
    slurm_list_destroy(jobs);
    if (!ended) err = "end of the run not yet in accounting";
    return ended;
}

}  // namespace

bool set_accounting_admin_comment(uint32_t job_id, int64_t start, const std::string &text,
                                  std::string &err) {
    std::string cluster = cluster_name();
    if (cluster.empty()) {
        err = "cannot read the cluster name: " + slurm_err();
        return false;
    }
    void *db = slurmdb_connection_get(nullptr);
    if (!db) {
        err = "no accounting connection: " + slurm_err();
        return false;
    }
    slurm_selected_step_t step{};
    step.array_task_id = NO_VAL;
    step.het_job_offset = NO_VAL;
    // Field by field: later releases add members to slurm_step_id_t.
    step.step_id.job_id = job_id;
    step.step_id.step_id = NO_VAL;
    step.step_id.step_het_comp = NO_VAL;
    slurmdb_job_cond_t cond{};
    // As sacctmgr does: db_flags 0 would mean "only jobs whose scheduling flags are 0"
    // (SLURMDB_JOB_FLAG_NONE), which matches no job that ever ran; no default time window.
    cond.db_flags = SLURMDB_JOB_FLAG_NOTSET;
    cond.flags = JOBCOND_FLAG_NO_DEFAULT_USAGE;
    cond.step_list = slurm_list_create(nullptr);
    slurm_list_append(cond.step_list, &step);
    cond.cluster_list = slurm_list_create(nullptr);
    slurm_list_append(cond.cluster_list, cluster.data());
    bool ok = run_ended_in_db(db, cond, start, err);
    if (ok) {
        slurmdb_job_rec_t rec{};
        rec.derived_ec = NO_VAL;  // leave unchanged
        rec.admin_comment = const_cast<char *>(text.c_str());
        idletime_list_t changed = slurmdb_job_modify(db, &cond, &rec);
        ok = changed && slurm_list_count(changed) > 0;
        if (!ok) err = changed ? "job not found in accounting" : slurm_err();
        if (changed) slurm_list_destroy(changed);
        if (ok) slurmdb_connection_commit(db, true);
    }
    slurmdb_connection_close(&db);
    slurm_list_destroy(cond.step_list);
    slurm_list_destroy(cond.cluster_list);
    return ok;
}

bool set_comment(uint32_t job_id, const std::string &text, std::string &err) {
    job_desc_msg_t d;
    slurm_init_job_desc_msg(&d);
    idletime_desc_set_job_id(&d, job_id);
    d.comment = const_cast<char *>(text.c_str());
    return update(d, err);
}

bool set_begin_time(uint32_t job_id, time_t t, std::string &err) {
    job_desc_msg_t d;
    slurm_init_job_desc_msg(&d);
    idletime_desc_set_job_id(&d, job_id);
    d.begin_time = t;
    return update(d, err);
}

bool queue_pass(uint32_t pending_job_id, std::string &err) {
    job_desc_msg_t d;
    slurm_init_job_desc_msg(&d);  // every field "no change"
    idletime_desc_set_job_id(&d, pending_job_id);
    return update(d, err);
}

bool cred_expire_s(int &out, std::string &err) {
    slurm_conf_t *conf = nullptr;
    if (slurm_load_ctl_conf(0, &conf) != SLURM_SUCCESS || !conf) {
        err = slurm_err();
        return false;
    }
    out = 120;  // DEFAULT_EXPIRATION_WINDOW of src/common/slurm_cred.c
    const char *tok = conf->authinfo ? strstr(conf->authinfo, "cred_expire=") : nullptr;
    if (tok) {
        int v = atoi(tok + strlen("cred_expire="));
        if (v >= 5) out = v;  // Slurm ignores smaller values too
    }
    idletime_free_ctl_conf(conf);
    return true;
}

bool requeue(uint32_t job_id, std::string &err) {
    if (idletime_requeue(job_id, 0) != SLURM_SUCCESS) {
        err = slurm_err();
        return false;
    }
    return true;
}

bool cancel(uint32_t job_id, std::string &err) {
    if (idletime_kill_job(job_id, SIGKILL, 0) != SLURM_SUCCESS) {
        err = slurm_err();
        return false;
    }
    return true;
}

}  // namespace idletime::slurmjob
