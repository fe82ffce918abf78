// job_submit/idletime: slurmctld entry points. Runs under slurmctld's locks (and job_submit's own
// mutex, which serialises every call into this plugin): no file is read per call (a stat() only
// in the second after a reconfigure), nothing that blocks, no exception leaves, never fatal.
//
// Config (config_path.hpp): $IDLETIME_CONFIG, else spank_idletime.so's config= in PlugStackConfig,
// else /etc/idletime/idletime.json; loaded at init. 22.05 re-inits job_submit plugins on
// `scontrol reconfigure` only when JobSubmitPlugins changes, so we reload when slurm_conf.last_update
// moves (set each time slurm.conf is read; see maybe_reload for same-second reconfigures);
// a config that fails to load keeps the last good one and the reason is logged.
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include "plugins/spank/spank_c.h"  // slurm_info/slurm_error/slurm_debug declarations

#include <dlfcn.h>
#include <sys/stat.h>
#include <time.h>

#include <cstdlib>
#include <exception>
#include <optional>
#include <string>

#include "plugins/job_submit/config_path.hpp"
#include "plugins/job_submit/ctld_account.h"
#include "plugins/job_submit/decide.hpp"
#include "plugins/job_submit/env_edit.hpp"
#include "plugins/spank/idletime_env.h"
#include "plugins/spank/job_key.hpp"

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

struct Loaded {
    idletime_config_t *cfg = nullptr;
    std::string path;
    time_t conf_generation = 0;  // slurm_conf.last_update (seconds) when loaded
    FileId file;
    bool recheck = false;  // loaded within the second of last_update: a 2nd reconfigure would not show
};
Loaded g_loaded;  // guarded by job_submit's plugin mutex

void load_config() {
    g_loaded.path = config_path(std::getenv(IDLETIME_ENV_CONFIG), slurm_conf.plugstack);
    g_loaded.conf_generation = slurm_conf.last_update;
    g_loaded.file = file_id(g_loaded.path);
    g_loaded.recheck = time(nullptr) <= slurm_conf.last_update;
    idletime_config_t *fresh = nullptr;
    char err[512] = "";
    if (idletime_config_load(g_loaded.path.c_str(), &fresh, err, sizeof(err)) != 0) {
        slurm_error("idletime/job_submit: cannot load config: %s; %s", err,
                    g_loaded.cfg ? "keeping the last good one" : "idletime jobs are rejected until it loads");
        return;
    }
    idletime_config_free(g_loaded.cfg);
    g_loaded.cfg = fresh;
    slurm_info("idletime/job_submit: loaded %s", g_loaded.path.c_str());
}

// After `scontrol reconfigure` (slurm.conf reread). last_update has one-second resolution: a
// second reconfigure in the same second leaves it unchanged. So while that second lasts (and once
// after) the file is compared too, and reloaded if it changed no later than that second.
void maybe_reload() {
    if (slurm_conf.last_update != g_loaded.conf_generation) return load_config();
    if (!g_loaded.recheck) return;
    if (time(nullptr) > g_loaded.conf_generation) g_loaded.recheck = false;  // this is the last look
    FileId now = file_id(g_loaded.path);
    if (!(now == g_loaded.file) && now.mtime.tv_sec <= g_loaded.conf_generation) load_config();
}

void replace(char **field, const std::string &value) {
    slurm_xfree(reinterpret_cast<void **>(field));
    *field = slurm_xstrdup(value.c_str());
}

const Allocator kSlurmAlloc{slurm_xstrdup, slurm_xrecalloc, slurm_xfree};

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

void apply(const Decision &d, job_desc_msg_t *desc) {
    replace(&desc->partition, d.partitions);
    // A fresh checkpoint directory key per submission, overwriting whatever the client sent.
    Decision with_key = d;
    with_key.job_env.emplace_back(IDLETIME_ENV_JOB_KEY, idletime::spank::new_job_key());
    add_job_env(with_key, desc);
    if (!d.set_account.empty()) replace(&desc->account, d.set_account);
    if (d.requeue) desc->requeue = 1;
    if (d.notice) {
        if (desc->warn_signal && desc->warn_signal != NO_VAL16 && desc->warn_signal != d.warn_signal)
            slurm_info("idletime/job_submit: replacing the job's --signal %u with the checkpoint signal %u",
                       desc->warn_signal, d.warn_signal);
        desc->warn_signal = d.warn_signal;
        desc->warn_time = d.warn_time;
        desc->warn_flags = d.warn_flags;
    }
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

int submit(job_desc_msg_t *desc, uint32_t uid, char **err_msg) {
    timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    maybe_reload();
    Submission sub = view_of(desc);
    if (needs_account(sub)) {
        char acct[256];
        // The job's owner (root may submit for another user), as Slurm's own association lookup.
        uint32_t owner = desc->user_id != NO_VAL ? desc->user_id : uid;
        if (idletime_ctld_default_account(owner, acct, sizeof(acct))) sub.default_account = acct;
    }
    if (is_plain_unrouted(sub)) sub.default_partition = site_default_partition();
    Decision d = decide(g_loaded.cfg, sub);
    switch (d.action) {
    case Action::Untouched:
        return SLURM_SUCCESS;
    case Action::Reject:
        if (err_msg) *err_msg = slurm_xstrdup(d.message.c_str());
        slurm_info("idletime/job_submit: rejected a job of uid %u: %s", uid, d.message.c_str());
        return slurm_rc(d.error);
    case Action::Apply:
        apply(d, desc);
        slurm_debug("idletime/job_submit: uid %u: %s (%.1f us)", uid, d.summary.c_str(), elapsed_us(t0));
        return SLURM_SUCCESS;
    }
    return SLURM_SUCCESS;
}

}  // namespace

extern "C" int init(void) {
    try {
        load_config();
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
    idletime_config_free(g_loaded.cfg);
    g_loaded.cfg = nullptr;
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
    if (err_msg && !*err_msg) *err_msg = slurm_xstrdup("idletime: internal error in job_submit/idletime");
    return SLURM_ERROR;
}

// scontrol update job: see decide_modify (job_record_t stays opaque with public headers).
extern "C" int job_modify(job_desc_msg_t *job_desc, void *, uint32_t submit_uid) {
    try {
        maybe_reload();
        const bool admin = submit_uid == 0 || submit_uid == slurm_conf.slurm_user_id;
        Decision d = decide_modify(g_loaded.cfg, job_desc ? job_desc->partition : nullptr, admin);
        if (d.action != Action::Reject) return SLURM_SUCCESS;
        // Updates name the job in job_id_str (job_id stays NO_VAL).
        const std::string job = job_desc->job_id_str && *job_desc->job_id_str ? job_desc->job_id_str
                                : job_desc->job_id != NO_VAL              ? std::to_string(job_desc->job_id)
                                                                          : "?";
        slurm_info("idletime/job_submit: refused update of job %s by uid %u: %s", job.c_str(), submit_uid,
                   d.message.c_str());
        return slurm_rc(d.error);
    } catch (...) {
        slurm_error("idletime/job_submit: internal error in job_modify");
    }
    return SLURM_ERROR;
}
