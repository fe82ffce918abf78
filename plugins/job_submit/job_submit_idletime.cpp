// job_submit/idletime: slurmctld entry points. Runs under slurmctld's locks (and job_submit's own
// mutex, which serialises every call into this plugin): no file I/O at all in a call, nothing
// that blocks (the only mutex is held for a pointer copy), no exception leaves, never fatal.
//
// Config (config_path.hpp): $IDLETIME_CONFIG, else spank_idletime.so's config= in PlugStackConfig,
// else /etc/idletime/idletime.json; loaded at init. 22.05 re-inits job_submit plugins on
// `scontrol reconfigure` only when JobSubmitPlugins changes, so a watcher thread (no slurmctld
// lock held) reloads when slurm_conf.last_update moves (set each time slurm.conf is read; see
// watch_once for same-second reconfigures) and swaps the new config in; calls only copy the
// pointer. A config that fails to load keeps the last good one and the reason is logged.
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include "compat/slurm_api.h"
#include "plugins/spank/spank_c.h"  // slurm_info/slurm_error/slurm_debug declarations

#include <dlfcn.h>
#include <sys/stat.h>
#include <time.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "plugins/job_submit/config_path.hpp"
#include "plugins/job_submit/ctld_account.h"
#include "plugins/job_submit/decide.hpp"
#include "plugins/job_submit/env_edit.hpp"
#include "plugins/spank/idletime_env.h"
#include "plugins/spank/job_key.hpp"
#include "src/core/log_text.hpp"

extern "C" {
extern const char plugin_name[] = "idletime job_submit plugin";
extern const char plugin_type[] = "job_submit/idletime";
extern const uint32_t plugin_version = SLURM_VERSION_NUMBER;

// Exported by libslurmfull (loaded by slurmctld) but declared only in internal headers. Slurm
// frees job_desc strings and *err_msg with xfree, which frees (ptr - 16): malloc'd strings
// would corrupt its heap, so ours must come from Slurm's allocator.
char *slurm_xstrdup(const char *str);
void slurm_xfree(void **item);
void *slurm_xrecalloc(void **item, size_t count, size_t size, bool clear, bool try_only, const char *file, int line,
                      const char *func);
extern slurm_conf_t slurm_conf;
}

namespace {

using namespace idletime::jobsubmit;

// Identity of the config file as loaded (detects a change without reading it).
struct FileId {
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = -1;
    timespec mtime{};
    bool operator==(const FileId &o) const {
        return dev == o.dev && ino == o.ino && size == o.size && mtime.tv_sec == o.mtime.tv_sec &&
               mtime.tv_nsec == o.mtime.tv_nsec;
    }
};

FileId file_id(const std::string &path) {
    struct stat st;
    FileId id;
    if (stat(path.c_str(), &st) != 0) return id;
    id.dev = st.st_dev;
    id.ino = st.st_ino;
    id.size = st.st_size;
    id.mtime = st.st_mtim;
    return id;
}

using ConfigPtr = std::shared_ptr<idletime_config_t>;

// The watcher's own bookkeeping (only it and init touch it).
struct Loaded {
    std::string path;
    time_t conf_generation = 0;  // slurm_conf.last_update (seconds) when loaded
    FileId file;
    bool recheck = false;  // loaded within the second of last_update: a 2nd reconfigure would not show
};
struct Shared {
    Loaded loaded;
    std::mutex mu;  // guards the four below; held only for copies, never during I/O
    std::condition_variable cv;
    ConfigPtr cfg;
    std::string plugstack;  // PlugStackConfig, copied by calls (they hold slurmctld's conf lock)
    bool stop = false;
    std::thread *watcher = nullptr;
};
// Never destroyed: slurmctld exits without calling fini, the watcher still running. Static
// objects would be torn down under it (and a joinable std::thread's destructor aborts).
Shared &g = *new Shared;

// slurm_conf.last_update read without slurmctld's conf lock: one aligned word, atomically.
time_t conf_generation() { return __atomic_load_n(&slurm_conf.last_update, __ATOMIC_RELAXED); }

ConfigPtr current() {
    std::lock_guard<std::mutex> l(g.mu);
    return g.cfg;
}

// Reads the config (file I/O): at init or in the watcher, never under slurmctld's locks.
void load_config() {
    std::string plugstack;
    {
        std::lock_guard<std::mutex> l(g.mu);
        plugstack = g.plugstack;
    }
    g.loaded.path = config_path(std::getenv(IDLETIME_ENV_CONFIG), plugstack.c_str());
    g.loaded.conf_generation = conf_generation();
    g.loaded.file = file_id(g.loaded.path);
    g.loaded.recheck = time(nullptr) <= g.loaded.conf_generation;
    idletime_config_t *fresh = nullptr;
    char err[512] = "";
    if (idletime_config_load(g.loaded.path.c_str(), &fresh, err, sizeof(err)) != 0) {
        slurm_error("idletime/job_submit: cannot load config: %s; %s", err,
                    current() ? "keeping the last good one" : "idletime jobs are rejected until it loads");
        return;
    }
    ConfigPtr next(fresh, idletime_config_free);
    {
        std::lock_guard<std::mutex> l(g.mu);
        g.cfg.swap(next);
    }
    slurm_info("idletime/job_submit: loaded %s", g.loaded.path.c_str());
}  // the old config is freed here, outside g.mu, once no call holds it

// After `scontrol reconfigure` (slurm.conf reread). last_update has one-second resolution: a
// second reconfigure in the same second leaves it unchanged. So while that second lasts (and once
// after) the file is compared too, and reloaded if it changed no later than that second.
void watch_once() {
    if (conf_generation() != g.loaded.conf_generation) return load_config();
    if (!g.loaded.recheck) return;
    if (time(nullptr) > g.loaded.conf_generation) g.loaded.recheck = false;  // this is the last look
    FileId now = file_id(g.loaded.path);
    if (!(now == g.loaded.file) && now.mtime.tv_sec <= g.loaded.conf_generation) load_config();
}

void watch() {
    std::unique_lock<std::mutex> l(g.mu);
    while (!g.stop) {
        g.cv.wait_for(l, std::chrono::milliseconds(200));
        if (g.stop) break;
        l.unlock();
        try {
            watch_once();
        } catch (...) {
            slurm_error("idletime/job_submit: internal error while reloading the config; keeping the last one");
        }
        l.lock();
    }
}

// In a call (slurmctld's conf read lock held): keep the watcher's PlugStackConfig current.
// Memory only; the watcher does the reading.
void maybe_reload() {
    const char *ps = slurm_conf.plugstack ? slurm_conf.plugstack : "";
    std::lock_guard<std::mutex> l(g.mu);
    if (g.plugstack != ps) {
        g.plugstack = ps;
        g.cv.notify_one();
    }
}

// Slurm's xstrdup/xmalloc abort slurmctld when memory runs out; this copy asks xrecalloc with
// try_only (NULL instead of abort) and still yields memory Slurm's xfree can free.
char *try_xstrdup(const char *str) {
    const size_t n = std::strlen(str) + 1;
    void *p = nullptr;
    if (!slurm_xrecalloc(&p, 1, n, false, true, __FILE__, __LINE__, __func__)) return nullptr;
    std::memcpy(p, str, n);
    return static_cast<char *>(p);
}

// false (field unchanged) when out of memory.
bool replace(char **field, const std::string &value) {
    char *copy = try_xstrdup(value.c_str());
    if (!copy) {
        slurm_error("idletime/job_submit: out of memory");
        return false;
    }
    slurm_xfree(reinterpret_cast<void **>(field));
    *field = copy;
    return true;
}

// An error message for Slurm (NULL when out of memory: Slurm then prints its generic one).
void set_err(char **err_msg, const std::string &msg) {
    if (err_msg && !*err_msg) *err_msg = try_xstrdup(msg.c_str());
}

const Allocator kSlurmAlloc{try_xstrdup, slurm_xrecalloc, slurm_xfree};

// spank_job_env holds NAME=value as sbatch sent it; a batch job's environment gets SLURM_SPANK_NAME
// as sbatch itself would have set it (interactive jobs take their environment from the client).
void add_job_env(const Decision &d, job_desc_msg_t *desc) {
    for (const auto &[name, value] : d.job_env) {
        bool ok = env_set(kSlurmAlloc, &desc->spank_job_env, &desc->spank_job_env_size, name, value, "SPANK_");
        if (ok && desc->environment && desc->env_size)
            ok = env_set(kSlurmAlloc, &desc->environment, &desc->env_size, "SLURM_SPANK_" + name, value);
        if (!ok) slurm_error("idletime/job_submit: out of memory adding %s to the job", name.c_str());
    }
}

bool apply(const Decision &d, job_desc_msg_t *desc) {
    if (!replace(&desc->partition, d.partitions)) return false;
    // A fresh checkpoint directory key per submission, overwriting whatever the client sent.
    Decision with_key = d;
    with_key.job_env.emplace_back(IDLETIME_ENV_JOB_KEY, idletime::spank::new_job_key());
    add_job_env(with_key, desc);
    if (!d.set_account.empty() && !replace(&desc->account, d.set_account)) return false;
    if (d.requeue) desc->requeue = 1;
    // An administrator's own --admin-comment wins (the views then derive the mode).
    if (!d.admin_comment.empty() && (!desc->admin_comment || !*desc->admin_comment))
        replace(&desc->admin_comment, d.admin_comment);
    if (d.notice) {
        if (desc->warn_signal && desc->warn_signal != NO_VAL16 && desc->warn_signal != d.warn_signal)
            slurm_info("idletime/job_submit: replacing the job's --signal %u with the checkpoint signal %u",
                       desc->warn_signal, d.warn_signal);
        desc->warn_signal = d.warn_signal;
        desc->warn_time = d.warn_time;
        desc->warn_flags = d.warn_flags;
    }
    return true;
}

// slurmctld's Default=YES partition name (`char *default_part_name` in partition_mgr.c, exported by
// slurmctld, not declared in public headers). job_submit runs with the partition read lock held,
// so the name is stable while we copy it. Looked up once: the variable's address never moves.
std::optional<std::string> site_default_partition() {
    static char *const *name = static_cast<char *const *>(dlsym(RTLD_DEFAULT, "default_part_name"));
    if (!name || !*name || !**name) return std::nullopt;
    return std::string(*name);
}

double elapsed_us(const timespec &t0) {
    timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) / 1e3;
}

// The checkpoint claim in the Comment is bound to the time it is written (decide.hpp).
void sanitize_comment(job_desc_msg_t *desc, bool at_submit) {
    if (!desc || !desc->comment) return;
    if (auto fixed = sanitize_ckpt_claim(desc->comment, time(nullptr), at_submit)) {
        slurm_info("idletime/job_submit: checkpoint claim in the Comment of job %s %s", at_submit ? "(new)"
                   : desc->job_id_str && *desc->job_id_str ? idletime::log_text(desc->job_id_str).c_str() : "?",
                   at_submit ? "removed at submission" : "not within 60 s of now: set to now");
        replace(&desc->comment, *fixed);
    }
}

int submit(job_desc_msg_t *desc, uint32_t uid, char **err_msg) {
    timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    maybe_reload();
    sanitize_comment(desc, true);
    Submission sub = view_of(desc);
    if (needs_account(sub)) {
        char acct[256];
        // The job's owner (root may submit for another user), as Slurm's own association lookup.
        uint32_t owner = desc->user_id != NO_VAL ? desc->user_id : uid;
        if (idletime_ctld_default_account(owner, acct, sizeof(acct))) sub.default_account = acct;
    }
    if (is_plain_unrouted(sub)) sub.default_partition = site_default_partition();
    const ConfigPtr cfg = current();
    Decision d = decide(cfg.get(), sub);
    switch (d.action) {
    case Action::Untouched:
        return SLURM_SUCCESS;
    case Action::Reject:
        set_err(err_msg, d.message);
        slurm_info("idletime/job_submit: rejected a job of uid %u: %s", uid, idletime::log_text(d.message).c_str());
        return slurm_rc(d.error);
    case Action::Apply:
        if (!apply(d, desc)) {
            set_err(err_msg, "idletime: out of memory in job_submit/idletime");
            return SLURM_ERROR;
        }
        slurm_debug("idletime/job_submit: uid %u: %s (%.1f us)", uid, idletime::log_text(d.summary).c_str(), elapsed_us(t0));
        return SLURM_SUCCESS;
    }
    return SLURM_SUCCESS;
}

}  // namespace

extern "C" int init(void) {
    try {
        {
            std::lock_guard<std::mutex> l(g.mu);
            g.plugstack = slurm_conf.plugstack ? slurm_conf.plugstack : "";
            g.stop = false;
        }
        load_config();
        if (!g.watcher) g.watcher = new std::thread(watch);
        slurm_info("idletime/job_submit: account of jobs without -A: %s",
                   idletime_ctld_account_available()
                       ? "DefaultAccount from slurmctld's association cache"
                       : "the hint spank/idletime sends (built without --with-slurm-src)");
    } catch (...) {
        slurm_error("idletime/job_submit: internal error while loading the config");
    }
    return SLURM_SUCCESS;  // never keep slurmctld from starting
}

extern "C" int fini(void) {
    try {
        {
            std::lock_guard<std::mutex> l(g.mu);
            g.stop = true;
            g.cv.notify_one();
        }
        if (g.watcher) {
            g.watcher->join();
            delete g.watcher;
            g.watcher = nullptr;
        }
        std::lock_guard<std::mutex> l(g.mu);
        g.cfg.reset();
    } catch (...) {
        slurm_error("idletime/job_submit: internal error at fini");
    }
    return SLURM_SUCCESS;
}

extern "C" int job_submit(job_desc_msg_t *job_desc, uint32_t submit_uid, char **err_msg) {
    try {
        return submit(job_desc, submit_uid, err_msg);
    } catch (const std::exception &e) {
        slurm_error("idletime/job_submit: internal error: %s", e.what());
    } catch (...) {
        slurm_error("idletime/job_submit: internal error");
    }
    set_err(err_msg, "idletime: internal error in job_submit/idletime");
    return SLURM_ERROR;
}

// scontrol update job: see decide_modify (job_record_t stays opaque with public headers).
extern "C" int job_modify(job_desc_msg_t *job_desc, void *, uint32_t submit_uid) {
    try {
        maybe_reload();
        sanitize_comment(job_desc, false);
        const bool admin = submit_uid == 0 || submit_uid == slurm_conf.slurm_user_id;
        const ConfigPtr cfg = current();
        Decision d = decide_modify(cfg.get(), job_desc ? job_desc->partition : nullptr, admin);
        if (d.action != Action::Reject) return SLURM_SUCCESS;
        // Updates name the job in job_id_str (job_id stays NO_VAL).
        const std::string job = job_desc->job_id_str && *job_desc->job_id_str ? job_desc->job_id_str
                                : idletime_desc_job_id(job_desc) != NO_VAL ? std::to_string(idletime_desc_job_id(job_desc))
                                                                          : "?";
        slurm_info("idletime/job_submit: refused update of job %s by uid %u: %s", idletime::log_text(job).c_str(), submit_uid,
                   idletime::log_text(d.message).c_str());
        return slurm_rc(d.error);
    } catch (...) {
        slurm_error("idletime/job_submit: internal error in job_modify");
    }
    return SLURM_ERROR;
}
