// libslurm -> plain structs for the view tools (public API only; see slurm_read.hpp).
#include "tools/views/slurm_read.hpp"

#include <pwd.h>
#include <slurm/slurm.h>
#include "compat/slurm_api.h"
#include <slurm/slurm_errno.h>
#include <slurm/slurmdb.h>

#include <fstream>
#include <map>
#include <memory>
#include <sstream>

namespace idletime::slurmread {
namespace {

using views::JobInfo;
using views::SlurmState;

std::string slurm_err() { return slurm_strerror(idletime_slurm_errno()); }
std::string s(const char *p) { return p ? p : ""; }

std::string user_name(uint32_t uid, const char *given) {
    if (given && *given) return given;
    static std::map<uint32_t, std::string> cache;  // getpwuid per job would dominate 10k-job lists
    auto it = cache.find(uid);
    if (it != cache.end()) return it->second;
    struct passwd *pw = getpwuid(uid);
    return cache[uid] = pw ? pw->pw_name : std::to_string(uid);
}

std::vector<std::string> split_commas(const char *p) {
    std::vector<std::string> out;
    std::string item;
    std::istringstream in(s(p));
    while (std::getline(in, item, ','))
        if (!item.empty()) out.push_back(item);
    return out;
}

// Slurm's reason names for the common pending reasons (its string function is not public API).
std::string reason_name(uint16_t r) {
    switch (r) {
    case WAIT_NO_REASON: return "";
    case WAIT_PRIORITY: return "Priority";
    case WAIT_DEPENDENCY: return "Dependency";
    case WAIT_RESOURCES: return "Resources";
    case WAIT_PART_NODE_LIMIT: return "PartitionNodeLimit";
    case WAIT_HELD: return "JobHeldAdmin";
    case WAIT_TIME: return "BeginTime";
    case WAIT_NODE_NOT_AVAIL: return "ReqNodeNotAvail";
    case WAIT_HELD_USER: return "JobHeldUser";
    case WAIT_QOS_GRP_CPU: return "QOSGrpCpuLimit";
    case WAIT_QOS_GRP_GRES: return "QOSGrpGRES";
    }
    return "reason " + std::to_string(r);
}

// Base state names as sacct prints them.
const char *state_name(uint32_t st) {
    static const char *names[] = {"PENDING", "RUNNING", "SUSPENDED", "COMPLETED", "CANCELLED", "FAILED",
                                  "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY"};
    if (st & JOB_REQUEUE) return "REQUEUED";
    uint32_t b = st & JOB_STATE_BASE;
    return b < sizeof names / sizeof *names ? names[b] : "UNKNOWN";
}

SlurmState state_of(uint32_t st) {
    uint32_t base = st & JOB_STATE_BASE;
    return base < JOB_END ? SlurmState(base) : SlurmState::Other;
}

void copy_job(const slurm_job_info_t &j, JobInfo &o) {
    o.job_id = j.job_id;
    o.name = s(j.name);
    o.uid = j.user_id;
    o.user = user_name(j.user_id, j.user_name);
    o.account = s(j.account);
    o.qos = s(j.qos);
    o.state = state_of(j.job_state);
    o.completing = j.job_state & JOB_COMPLETING;
    o.partitions = split_commas(j.partition);
    bool running = o.state == SlurmState::Running || o.state == SlurmState::Suspended;
    o.nodes = running ? s(j.nodes) : "";
    std::string tres = s(running && j.tres_alloc_str ? j.tres_alloc_str : j.tres_req_str);
    o.gpus = views::tres_gpus(tres);
    o.cpus = views::tres_count(tres, "cpu");
    if (!o.cpus) o.cpus = j.num_cpus;
    o.restart_cnt = j.restart_cnt;
    o.submit_time = j.submit_time;
    o.start_time = j.start_time;
    o.end_time = j.end_time;
    o.eligible_time = o.state == SlurmState::Pending ? j.eligible_time : 0;
    o.preempt_time = j.preempt_time;
    o.wait_status = int(j.exit_code);
    o.state_reason = j.state_desc ? j.state_desc : reason_name(j.state_reason);
    o.admin_comment = s(j.admin_comment);
    o.comment = s(j.comment);
}

// Owns a slurmdbd connection for one function.
struct Db {
    void *conn = nullptr;
    Db() {
        uint16_t flags = 0;
        conn = slurmdb_connection_get(&flags);
    }
    ~Db() {
        if (conn) slurmdb_connection_close(&conn);
    }
};

struct ListOf {
    idletime_list_t l;
    explicit ListOf(idletime_list_t x) : l(x) {}
    ~ListOf() {
        if (l) slurm_list_destroy(l);
    }
    template <class T, class F>
    void each(F f) const {
        if (!l) return;
        idletime_list_itr_t it = slurm_list_iterator_create(l);
        while (void *x = slurm_list_next(it)) f(*static_cast<T *>(x));
        slurm_list_iterator_destroy(it);
    }
};

// A list of C strings we own (no destructor: the strings live in the caller's std::string).
idletime_list_t names(std::initializer_list<const std::string *> v) {
    idletime_list_t l = slurm_list_create(nullptr);
    for (const std::string *x : v) slurm_list_append(l, const_cast<char *>(x->c_str()));
    return l;
}

}  // namespace

bool load_jobs(std::vector<JobInfo> &out, std::string &err) {
    job_info_msg_t *msg = nullptr;
    if (slurm_load_jobs(0, &msg, SHOW_ALL) != SLURM_SUCCESS) return err = slurm_err(), false;
    out.resize(msg->record_count);
    for (uint32_t i = 0; i < msg->record_count; i++) copy_job(msg->job_array[i], out[i]);
    slurm_free_job_info_msg(msg);
    return true;
}

bool load_job(uint32_t job_id, JobInfo &out, std::string &err) {
    job_info_msg_t *msg = nullptr;
    if (idletime_load_job(&msg, job_id, SHOW_ALL) != SLURM_SUCCESS) return err = slurm_err(), false;
    bool found = msg && msg->record_count > 0;
    if (found) copy_job(msg->job_array[0], out);
    slurm_free_job_info_msg(msg);
    if (!found) err = "job " + std::to_string(job_id) + " not found";
    return found;
}

bool is_operator(uint32_t uid, std::string &why) {
    if (uid == 0) return why = "root", true;
    slurm_conf_t *conf = nullptr;
    if (slurm_load_ctl_conf(0, &conf) == SLURM_SUCCESS) {
        bool su = conf->slurm_user_id == uid;
        idletime_free_ctl_conf(conf);
        if (su) return why = "SlurmUser", true;
    }
    Db db;
    if (!db.conn) return why = "slurmdbd unreachable: not an operator", false;
    std::string name = user_name(uid, nullptr);
    slurmdb_assoc_cond_t assoc{};
    assoc.user_list = names({&name});
    slurmdb_user_cond_t cond{};
    cond.assoc_cond = &assoc;
    bool op = false;
    {
        ListOf users(slurmdb_users_get(db.conn, &cond));
        users.each<slurmdb_user_rec_t>([&](slurmdb_user_rec_t &u) {
            if (u.admin_level >= SLURMDB_ADMIN_OPERATOR) op = true;
        });
    }
    slurm_list_destroy(assoc.user_list);
    why = op ? "Slurm operator/administrator" : "ordinary user";
    return op;
}

std::string hidden_jobs_warning(uint32_t uid) {
    slurm_conf_t *conf = nullptr;
    if (slurm_load_ctl_conf(0, &conf) != SLURM_SUCCESS || !conf) return "";  // scrapes say so
    const bool private_jobs = conf->private_data & PRIVATE_DATA_JOBS;
    const std::string slurm_user = s(conf->slurm_user_name);
    idletime_free_ctl_conf(conf);
    std::string why;
    if (!private_jobs || is_operator(uid, why)) return "";
    return "runs as " + user_name(uid, nullptr) + " (" + why + ") and slurmctld has PrivateData=jobs: it sees only " +
           "that user's jobs, so every quota and job metric undercounts; run it as SlurmUser (" + slurm_user +
           ") or root, or make the user a Slurm operator (sacctmgr modify user NAME set AdminLevel=Operator)";
}

bool node_gres(const std::string &node, std::string &gres, std::string &err) {
    node_info_msg_t *msg = nullptr;
    if (slurm_load_node_single(&msg, const_cast<char *>(node.c_str()), SHOW_ALL) != SLURM_SUCCESS)
        return err = node + ": " + slurm_err(), false;
    bool found = msg && msg->record_count > 0 && msg->node_array[0].name;
    if (found) gres = s(msg->node_array[0].gres);
    slurm_free_node_info_msg(msg);
    if (!found) err = node + ": no such node in slurmctld";
    return found;
}

bool drain_node(const std::string &node, const std::string &reason, std::string &err) {
    update_node_msg_t m;
    slurm_init_update_node_msg(&m);
    m.node_names = const_cast<char *>(node.c_str());
    m.node_state = NODE_STATE_DRAIN;
    m.reason = const_cast<char *>(reason.c_str());
    if (slurm_update_node(&m) != SLURM_SUCCESS) return err = node + ": drain failed: " + slurm_err(), false;
    return true;
}

// Accounting stores TRES by database id ("1=8,2=16000,1001=4"): the id of gres/gpu, 0 if none.
uint32_t gpu_tres_id(void *conn) {
    slurmdb_tres_cond_t cond{};
    uint32_t id = 0;
    ListOf all(slurmdb_tres_get(conn, &cond));
    all.each<slurmdb_tres_rec_t>([&](slurmdb_tres_rec_t &t) {
        if (t.type && t.name && s(t.type) == "gres" && s(t.name) == "gpu") id = t.id;
    });
    return id;
}

bool job_runs(uint32_t job_id, std::vector<RunRow> &out, std::string &err) {
    Db db;
    if (!db.conn) return err = "cannot connect to slurmdbd: " + slurm_err(), false;
    slurm_selected_step_t step{};
    step.array_task_id = NO_VAL;
    step.het_job_offset = NO_VAL;
    step.step_id.job_id = job_id;
    step.step_id.step_id = NO_VAL;
    step.step_id.step_het_comp = NO_VAL;
    slurmdb_job_cond_t cond{};
    cond.flags = JOBCOND_FLAG_DUP | JOBCOND_FLAG_NO_STEP;
    cond.db_flags = SLURMDB_JOB_FLAG_NOTSET;  // 0 would select only jobs whose scheduling flags are 0
    cond.step_list = slurm_list_create(nullptr);
    slurm_list_append(cond.step_list, &step);
    cond.usage_start = 1;  // every record, not only today's
    const uint32_t gpu_id = gpu_tres_id(db.conn);
    {
        ListOf jobs(slurmdb_jobs_get(db.conn, &cond));
        if (!jobs.l) err = "slurmdbd: " + slurm_err();
        jobs.each<slurmdb_job_rec_t>([&](slurmdb_job_rec_t &j) {
            RunRow r;
            r.submit = j.submit, r.start = j.start, r.end = j.end;
            r.partition = s(j.partition), r.nodes = s(j.nodes);
            r.state = state_name(j.state);
            r.wait_status = int(j.exitcode);
            r.gpus = gpu_id ? views::tres_count(s(j.tres_alloc_str), std::to_string(gpu_id)) : 0;
            r.admin_comment = s(j.admin_comment);
            out.push_back(r);
        });
    }
    slurm_list_destroy(cond.step_list);
    return err.empty();
}

bool accounting_admin_comments(const std::vector<uint32_t> &ids, std::map<uint32_t, std::string> &out,
                               std::string &err) {
    if (ids.empty()) return true;
    Db db;
    if (!db.conn) return err = "cannot connect to slurmdbd: " + slurm_err(), false;
    std::vector<slurm_selected_step_t> steps(ids.size());
    slurmdb_job_cond_t cond{};
    cond.flags = JOBCOND_FLAG_NO_STEP;  // no DUP: only the newest record of each job
    cond.db_flags = SLURMDB_JOB_FLAG_NOTSET;
    cond.step_list = slurm_list_create(nullptr);
    for (size_t i = 0; i < ids.size(); i++) {
        steps[i].array_task_id = NO_VAL;
        steps[i].het_job_offset = NO_VAL;
        steps[i].step_id.job_id = ids[i];
        steps[i].step_id.step_id = NO_VAL;
        steps[i].step_id.step_het_comp = NO_VAL;
        slurm_list_append(cond.step_list, &steps[i]);
    }
    cond.usage_start = 1;
    {
        ListOf jobs(slurmdb_jobs_get(db.conn, &cond));
        if (!jobs.l) err = "slurmdbd: " + slurm_err();
        jobs.each<slurmdb_job_rec_t>([&](slurmdb_job_rec_t &j) {
            if (j.admin_comment) out[j.jobid] = j.admin_comment;
        });
    }
    slurm_list_destroy(cond.step_list);
    return err.empty();
}

}  // namespace idletime::slurmread
