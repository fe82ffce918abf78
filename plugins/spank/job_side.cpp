// Job side (slurmstepd, root, before the tasks start): the environment the job and the checkpoint
// library read, and the per-job checkpoint directory. Values chosen at submission come back as
// SLURM_SPANK_<var> (sbatch/salloc copy the job control environment into the job's environment,
// also with --export=NONE), so precedence is decided once, at submission.
//
// Trust: root acts for the job's user only, and knows who that is from Slurm alone: S_JOB_UID,
// S_JOB_GID, S_JOB_ID (from the job credential) and getpwuid_r. Every environment variable read here
// (SLURM_SPANK_IDLETIME_*, SLURM_JOB_PARTITION/ACCOUNT) can be set by the job's user in an srun
// step, so it only decides things confined to that user: whether the user's own checkpoint
// directory is made, the name of that directory below <root>/<their name>, and the values exported
// back into their own job. See doc/security.md (part 1).
#include <pwd.h>
#include <unistd.h>
#include "src/core/log_text.hpp"
#include "plugins/spank/spank_c.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "idletime/idletime.h"
#include "plugins/spank/ckpt_dir.hpp"
#include "plugins/spank/hooks.hpp"
#include "plugins/spank/idletime_env.h"

namespace idletime::spank {
namespace {

using Vars = std::vector<std::pair<std::string, std::string>>;
using ConfigPtr = std::unique_ptr<idletime_config_t, decltype(&idletime_config_free)>;

std::optional<std::string> submitted(spank_t sp, int index) {
    std::optional<std::string> v = job_getenv(sp, ("SLURM_SPANK_" + std::string(kOptions[index].job_var)).c_str());
    if (v && !v->empty()) return v;
    if (state().options.user_given(index)) return state().options.effective(index);  // srun's own options
    return std::nullopt;
}

// The name of the job's uid from the password database; never SLURM_JOB_USER (the user sets it).
std::string job_user(uid_t uid) {
    std::vector<char> buf(16384);
    struct passwd pw, *res = nullptr;
    if (getpwuid_r(uid, &pw, buf.data(), buf.size(), &res) != 0 || !res) return "";
    return pw.pw_name;
}

// Quota the job runs under when --quota was not given: the core's answer for its account.
std::string resolved_quota(const idletime_config_t *cfg, spank_t sp, const std::string &mode) {
    std::optional<std::string> acct = job_getenv(sp, "SLURM_JOB_ACCOUNT");
    idletime_request_t req{};
    req.account = acct ? acct->c_str() : nullptr;
    if (idletime_mode_parse(mode.c_str(), &req.mode, nullptr, 0) != 0) return "";
    idletime_resolution_t *res = nullptr;
    if (idletime_resolve(cfg, &req, &res, nullptr, 0) != 0) return "";
    std::string q = idletime_resolution_quota(res);
    idletime_resolution_free(res);
    return q;
}

// The job's own per-job directory key, stamped by job_submit/idletime at submission (by the client
// for interactive jobs); stored in the batch job's environment, so a requeue keeps it.
std::string job_key(spank_t sp) {
    std::optional<std::string> k = job_getenv(sp, "SLURM_SPANK_" IDLETIME_ENV_JOB_KEY);
    return k ? *k : "";
}

void add_ckpt_dir(spank_t sp, const idletime_idle_settings_t &s, Vars &vars) {
    uid_t uid;
    gid_t gid;
    uint32_t jobid;
    if (spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS || spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_ID, &jobid) != ESPANK_SUCCESS) {
        slurm_error("idletime/spank: cannot read the job's uid/gid/id; no %s", IDLETIME_ENV_CKPT_DIR);
        return;
    }
    const std::string user = job_user(uid), name = ckpt_dir_name(jobid, job_key(sp));
    std::string err;
    if (user.empty())
        err = "uid " + std::to_string(uid) + " has no name in the password database";
    else if (name.empty())
        err = "the job has no valid " + std::string(IDLETIME_ENV_JOB_KEY) + " (8-32 hex digits; job_submit/idletime sets it)";
    CkptResult r;
    if (err.empty()) r = ckpt_dir_ensure(s.checkpoint_root, user, name, uid, gid);
    if (err.empty() && r.error == CkptError::None) {
        vars.emplace_back(IDLETIME_ENV_CKPT_DIR, ckpt_dir_path(s.checkpoint_root, user, name));
        spank_unsetenv(sp, IDLETIME_ENV_CKPT_DIR_ERROR);  // a step inherits the batch step's
        return;
    }
    if (err.empty()) err = r.message;
    slurm_error("idletime/spank: job %u: %s; %s not set", jobid, idletime::log_text(err).c_str(), IDLETIME_ENV_CKPT_DIR);
    // Why, for the job: task_side prints it on the first task's stderr.
    vars.emplace_back(IDLETIME_ENV_CKPT_DIR_ERROR,
                      r.error == CkptError::Root ? "the site's checkpoint_root is unsafe (see slurmd's log)" : err);
}

void add_config_vars(spank_t sp, const idletime_config_t *cfg, const std::string &mode, bool have_quota, Vars &vars) {
    std::optional<std::string> part = job_getenv(sp, "SLURM_JOB_PARTITION");
    const char *owner = nullptr;
    idletime_part_kind_t kind = idletime_partition_kind(cfg, part ? part->c_str() : "", &owner);
    vars.emplace_back(IDLETIME_ENV_PREEMPTIBLE, kind == IDLETIME_PART_IDLE ? "1" : "0");
    vars.emplace_back(IDLETIME_ENV_PARTITION_KIND,
                      kind == IDLETIME_PART_IDLE ? "idle" : kind == IDLETIME_PART_QUOTA ? "quota" : "unknown");
    if (!have_quota) {
        std::string q = kind == IDLETIME_PART_QUOTA && owner ? owner : resolved_quota(cfg, sp, mode);
        if (!q.empty()) vars.emplace_back(IDLETIME_ENV_QUOTA, q);
    }
    idletime_idle_settings_t s{};
    idletime_config_idle_settings(cfg, &s);
    if (s.checkpoint_signal_name) vars.emplace_back(IDLETIME_ENV_CKPT_SIGNAL, s.checkpoint_signal_name);
    vars.emplace_back(IDLETIME_ENV_GRACE_TIME, std::to_string(s.grace_time_s));
    if (s.checkpoint_root && *s.checkpoint_root) add_ckpt_dir(sp, s, vars);
}

}  // namespace

int job_side(spank_t sp) {
    std::optional<std::string> mode = submitted(sp, kIdleResources);
    if (!mode) return 0;  // not an idletime job: its environment stays as it was
    Vars vars;
    bool have_quota = false;
    for (int k = 0; k < kOptionCount; ++k) {
        std::optional<std::string> v = submitted(sp, k);
        if (!v) continue;
        vars.emplace_back(kOptions[k].job_var, *v);
        have_quota = have_quota || k == kQuota;
    }
    char err[512] = "";
    idletime_config_t *raw = nullptr;
    if (idletime_config_load(state().options.config_path().c_str(), &raw, err, sizeof(err)) == 0) {
        ConfigPtr cfg(raw, idletime_config_free);
        add_config_vars(sp, cfg.get(), *mode, have_quota, vars);
    } else {
        slurm_error("idletime/spank: %s; preemptibility, checkpoint directory and signal not set",
                    idletime::log_text(err).c_str());
    }
    if (!state().options.munge_socket().empty())
        vars.emplace_back(IDLETIME_ENV_MUNGE_SOCKET, state().options.munge_socket());
    for (const auto &[name, value] : vars)
        if (spank_setenv(sp, name.c_str(), value.c_str(), 1) != ESPANK_SUCCESS)
            slurm_error("idletime/spank: cannot set %s in the job", name.c_str());
    return 0;
}

// SLURM_RESTART_COUNT exists only in each task's environment (set after init_post_opt), and
// S_SLURM_RESTART_COUNT reads a field 22.05's slurmstepd never fills for batch jobs: so per task.
int task_side(spank_t sp) {
    if (!job_getenv(sp, IDLETIME_ENV_MODE)) return 0;  // not an idletime job
    uint32_t rank = 1;
    std::optional<std::string> why = job_getenv(sp, IDLETIME_ENV_CKPT_DIR_ERROR);
    if (why && spank_get_item(sp, S_TASK_GLOBAL_ID, &rank) == ESPANK_SUCCESS && rank == 0) {
        // Runs in the task as the user, with the job's stderr already open.
        std::string line = "idletime: no checkpoint directory (" IDLETIME_ENV_CKPT_DIR " unset): " + *why + "\n";
        ssize_t ignored = write(STDERR_FILENO, line.data(), line.size());
        (void)ignored;
    }
    std::optional<std::string> restarts = job_getenv(sp, "SLURM_RESTART_COUNT");
    const std::string value = restarts && !restarts->empty() ? *restarts : "0";
    if (spank_setenv(sp, IDLETIME_ENV_RESTART_COUNT, value.c_str(), 1) != ESPANK_SUCCESS)
        slurm_error("idletime/spank: cannot set %s in the task", IDLETIME_ENV_RESTART_COUNT);
    return 0;
}

}  // namespace idletime::spank
