// After a durable commit, tell slurmctld when the job's newest checkpoint was taken, so
// preempt/idletime can prefer victims that lose the least work without any I/O of its own.
// Channel: the "idletime:ckpt=<unix time>" token of the job's Comment (src/sched/comment.cpp),
// set through slurm_update_job, which Slurm allows only to the job's owner or an admin. Best
// effort: the checkpoint is already durable, so a failure here is logged once and ignored.
#include "ckpt/publish.hpp"

#include <slurm/slurm.h>
#include "compat/slurm_api.h"
#include <slurm/slurm_errno.h>

#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "sched/policy.hpp"

namespace idletime::ckpt {

namespace {

constexpr int64_t kMinInterval = 5;  // seconds between two Comment updates of one process

// The last job load's view (guarded by seen_mu: release() reads it from another thread).
std::mutex seen_mu;
uint32_t seen_id = 0;
JobSeen seen;
std::chrono::steady_clock::time_point seen_at;

void remember(uint32_t id, const slurm_job_info_t &j) {
    std::lock_guard<std::mutex> g(seen_mu);
    seen_id = id;
    seen.state = j.job_state;
    seen.preempt_time = j.preempt_time;
    seen.end_time = j.end_time;
    seen_at = std::chrono::steady_clock::now();
}

uint32_t target_job(const std::string &job_id) {
    return publish_target(job_id, std::getenv("SLURM_JOB_ID"), std::getenv("IDLETIME_CKPT_PUBLISH"),
                          std::getenv("IDLETIME_PREEMPTIBLE"));
}

// A process that loaded us with dlopen(RTLD_LOCAL) (Python's ctypes does) keeps libslurm's
// symbols private; the plugins libslurm loads itself (auth/munge, hash/k12) then fail to bind
// and the lazy lookup kills the process. Promote the already loaded libslurm to global scope.
void make_libslurm_global() {
    Dl_info info;
    if (dladdr(reinterpret_cast<void *>(&slurm_init), &info) && info.dli_fname)
        (void)dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
}

bool update_comment(uint32_t id, int64_t t, std::string &err) {
    job_info_msg_t *info = nullptr;
    if (idletime_load_job(&info, id, SHOW_DETAIL | SHOW_LOCAL) != SLURM_SUCCESS || !info || info->record_count < 1) {
        err = std::string("slurm_load_job: ") + slurm_strerror(idletime_slurm_errno());
        if (info) slurm_free_job_info_msg(info);
        return false;
    }
    remember(id, info->job_array[0]);
    const char *old = info->job_array[0].comment;
    std::string comment = idletime::sched::with_checkpoint(old ? old : "", t);
    slurm_free_job_info_msg(info);
    job_desc_msg_t desc;
    slurm_init_job_desc_msg(&desc);
    idletime_desc_set_job_id(&desc, id);
    desc.comment = comment.data();
    if (slurm_update_job(&desc) != SLURM_SUCCESS) {
        err = std::string("slurm_update_job: ") + slurm_strerror(idletime_slurm_errno());
        return false;
    }
    return true;
}

}  // namespace

bool recent_job_seen(uint32_t id, int64_t max_age_ms, JobSeen &out) noexcept {
    std::lock_guard<std::mutex> g(seen_mu);
    if (!id || id != seen_id || std::chrono::steady_clock::now() - seen_at > std::chrono::milliseconds(max_age_ms))
        return false;
    out = seen;
    return true;
}

uint32_t publish_target(const std::string &job_id, const char *slurm_job_id, const char *publish,
                        const char *preemptible) {
    if (!slurm_job_id || job_id.empty() || job_id != slurm_job_id || (publish && std::strcmp(publish, "0") == 0))
        return 0;
    // A run that spank_idletime placed in a quota partition is never a preemption candidate:
    // its checkpoint time would only cost slurmctld two RPCs (one under the job write lock).
    if (preemptible && std::strcmp(preemptible, "0") == 0) return 0;
    char *end = nullptr;
    unsigned long id = std::strtoul(job_id.c_str(), &end, 10);
    return (*end || id == 0 || id > UINT32_MAX) ? 0 : uint32_t(id);
}

void publish_checkpoint(const std::string &job_id, int64_t taken_at) noexcept {
    static std::mutex mu;
    static int64_t last = 0;
    static bool warned = false;
    try {
        uint32_t id = target_job(job_id);
        if (!id) return;
        std::lock_guard<std::mutex> g(mu);
        if (last && taken_at - last < kMinInterval) return;
        static std::once_flag once;
        std::call_once(once, [] {
            make_libslurm_global();
            slurm_init(nullptr);
        });
        std::string err;
        if (update_comment(id, taken_at, err)) {
            last = taken_at;
        } else if (!warned) {
            warned = true;
            std::fprintf(stderr, "idletime/ckpt: could not publish the checkpoint time of job %u to Slurm: %s\n",
                         id, err.c_str());
        }
    } catch (...) {
        // out of memory building the comment: the checkpoint stays valid, only the hint is lost
    }
}

}  // namespace idletime::ckpt
