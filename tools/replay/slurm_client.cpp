#include "slurm_client.hpp"

#include <csignal>
#include <cstdlib>
#include <unistd.h>
#include <slurm/slurm.h>
#include "compat/slurm_api.h"
#include <slurm/slurm_errno.h>

namespace idletime::replay {

namespace {

std::vector<char *> cstrings(const std::vector<std::string> &v)
{
    std::vector<char *> out;
    for (const auto &s : v)
        out.push_back(const_cast<char *>(s.c_str()));
    out.push_back(nullptr);
    return out;
}

char *mut(const std::string &s) { return s.empty() ? nullptr : const_cast<char *>(s.c_str()); }

}  // namespace

void slurm_client_init(const std::string &slurm_conf)
{
    setenv("SLURM_CONF", slurm_conf.c_str(), 1);
    slurm_init(slurm_conf.c_str());
}

void slurm_client_fini() { slurm_fini(); }

CtldPlugins load_ctld_plugins()
{
    slurm_conf_t *conf = nullptr;
    if (slurm_load_ctl_conf(0, &conf) != SLURM_SUCCESS || !conf)
        throw SlurmError(std::string("slurm_load_ctl_conf: ") + slurm_strerror(idletime_slurm_errno()));
    auto str = [](const char *s) { return std::string(s ? s : ""); };
    CtldPlugins p{str(conf->preempt_type), str(conf->priority_type), str(conf->job_submit_plugins)};
    idletime_free_ctl_conf(conf);
    return p;
}

uint32_t schedule_cycles()
{
    stats_info_request_msg_t req{};
    req.command_id = STAT_COMMAND_GET;
    stats_info_response_msg_t *st = nullptr;
    if (slurm_get_statistics(&st, &req) != SLURM_SUCCESS || !st)
        throw SlurmError(std::string("slurm_get_statistics: ") + slurm_strerror(idletime_slurm_errno()));
    uint32_t n = st->schedule_cycle_counter;
    idletime_free_stats(st);
    return n;
}

uint32_t submit_job(const SubmitSpec &s)
{
    job_desc_msg_t d;
    slurm_init_job_desc_msg(&d);
    d.name = mut(s.name);
    d.account = mut(s.account);
    d.partition = mut(s.partition);
    d.tres_per_node = mut(s.tres);
    d.script = mut(s.script);
    d.work_dir = mut(s.workdir);
    d.std_out = mut(s.output);
    d.std_err = mut(s.output);
    auto env = cstrings(s.env);
    d.environment = env.data();
    d.env_size = static_cast<uint32_t>(s.env.size());
    auto senv = cstrings(s.spank_env);
    if (!s.spank_env.empty()) {
        d.spank_job_env = senv.data();
        d.spank_job_env_size = static_cast<uint32_t>(s.spank_env.size());
    }
    d.user_id = getuid();
    d.group_id = getgid();
    d.min_nodes = d.max_nodes = s.nodes;
    d.num_tasks = s.nodes;
    d.cpus_per_task = 1;
    d.pn_min_memory = 256;  // MB per node
    d.time_limit = s.time_limit_min;
    d.requeue = 1;
    if (s.held)
        d.priority = 0;
    if (s.notice_to_batch) {
        d.warn_signal = SIGUSR1;
        d.warn_flags = KILL_JOB_BATCH;
        d.warn_time = 60;  // also sent 60 s before the time limit, which replay jobs never reach
    }
    submit_response_msg_t *resp = nullptr;
    if (slurm_submit_batch_job(&d, &resp) != SLURM_SUCCESS || !resp)
        throw SlurmError("submitting " + s.name + " (account " + s.account + ", partition " +
                         (s.partition.empty() ? "<routed>" : s.partition) +
                         "): " + slurm_strerror(idletime_slurm_errno()));
    uint32_t id = idletime_submit_job_id(resp);
    slurm_free_submit_response_response_msg(resp);
    return id;
}

std::vector<JobView> load_jobs(const std::set<uint32_t> &ids)
{
    job_info_msg_t *msg = nullptr;
    if (slurm_load_jobs(0, &msg, SHOW_ALL) != SLURM_SUCCESS)
        throw SlurmError(std::string("slurm_load_jobs: ") + slurm_strerror(idletime_slurm_errno()));
    std::vector<JobView> out;
    for (uint32_t i = 0; i < msg->record_count; i++) {
        const slurm_job_info_t &j = msg->job_array[i];
        if (!ids.count(j.job_id))
            continue;
        JobView v;
        v.id = j.job_id;
        v.base = j.job_state & JOB_STATE_BASE;
        v.completing = (j.job_state & JOB_COMPLETING) != 0;
        v.requeue = (j.job_state & (JOB_REQUEUE | JOB_REQUEUE_FED | JOB_REQUEUE_HOLD)) != 0;
        v.restarts = j.restart_cnt;
        v.start = j.start_time;
        v.end = j.end_time;
        v.preempt = j.preempt_time;
        std::string p = j.partition ? j.partition : "";
        v.partition = p.substr(0, p.find(','));
        out.push_back(v);
    }
    slurm_free_job_info_msg(msg);
    return out;
}

namespace {

// Calls fn for every pending or running job slurmctld holds (SHOW_ALL). Throws SlurmError.
template <class Fn>
void for_each_active_job(Fn fn)
{
    job_info_msg_t *msg = nullptr;
    if (slurm_load_jobs(0, &msg, SHOW_ALL) != SLURM_SUCCESS)
        throw SlurmError(std::string("slurm_load_jobs: ") + slurm_strerror(idletime_slurm_errno()));
    for (uint32_t i = 0; i < msg->record_count; i++) {
        uint32_t base = msg->job_array[i].job_state & JOB_STATE_BASE;
        if (base == JOB_PENDING || base == JOB_RUNNING)
            fn(msg->job_array[i]);
    }
    slurm_free_job_info_msg(msg);
}

}  // namespace

int foreign_active_jobs(const std::set<uint32_t> &ids)
{
    int n = 0;
    for_each_active_job([&](const slurm_job_info_t &j) { n += !ids.count(j.job_id); });
    return n;
}

// A replay job's work dir is DIR/<configuration letter> and its output DIR/<letter>/out/...
// (runner.cpp): nothing else of the user's under DIR looks like that.
bool is_replay_job(const std::string &dir, const std::string &work_dir, const std::string &std_out)
{
    if (work_dir.size() != dir.size() + 2 || work_dir.compare(0, dir.size() + 1, dir + "/") != 0)
        return false;
    char letter = work_dir.back();
    return letter >= 'A' && letter <= 'D' && std_out.rfind(work_dir + "/out/", 0) == 0;
}

std::vector<uint32_t> own_jobs_under(const std::string &dir)
{
    std::vector<uint32_t> out;
    for_each_active_job([&](const slurm_job_info_t &j) {
        if (j.user_id == getuid() && j.work_dir && j.std_out && is_replay_job(dir, j.work_dir, j.std_out))
            out.push_back(j.job_id);
    });
    return out;
}

bool job_state_active(const JobView &v) { return v.completing || v.base == JOB_PENDING || v.base == JOB_RUNNING; }
void cancel_job(uint32_t id) { idletime_kill_job(id, SIGKILL, 0); }

bool job_state_running(const JobView &v) { return v.base == JOB_RUNNING && !v.completing; }
bool job_state_completed(const JobView &v) { return v.base == JOB_COMPLETE && !v.requeue; }
bool job_state_failed(const JobView &v)
{
    return !v.requeue && (v.base == JOB_FAILED || v.base == JOB_CANCELLED || v.base == JOB_TIMEOUT ||
           v.base == JOB_NODE_FAIL || v.base == JOB_BOOT_FAIL || v.base == JOB_DEADLINE ||
           v.base == JOB_OOM);
}
const char *job_state_name(const JobView &v)
{
    static const char *names[] = {"PENDING", "RUNNING", "SUSPENDED", "COMPLETED", "CANCELLED",
                                  "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL",
                                  "DEADLINE", "OOM"};
    return v.base < sizeof names / sizeof names[0] ? names[v.base] : "UNKNOWN";
}

}  // namespace idletime::replay
