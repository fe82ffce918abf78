// Submission side (sbatch, srun, salloc): options -> job control environment for job_submit/idletime.
//
// The job's account: sbatch does not show -A to SPANK, and job_desc->account is NULL in slurmctld
// when the user relies on the default account, which a job_submit plugin cannot look up with public
// headers. So we send IDLETIME_ACCOUNT: the *_ACCOUNT environment variable sbatch/salloc/srun honour,
// else the user's DefaultAccount from slurmctld's association cache. It is only a hint for choosing partitions: job_submit
// writes it into job_desc->account, so Slurm still checks the user's association and the partitions'
// AllowAccounts; a forged value cannot grant access. job_submit/idletime built with --with-slurm-src
// reads the DefaultAccount itself: plugstack account_hint=no then saves the RPC per submission.
#include <errno.h>
#include <pwd.h>
#include <slurm/slurm.h>
#include "compat/slurm_api.h"
#include <slurm/slurmdb.h>
#include "src/core/log_text.hpp"
#include "plugins/spank/spank_c.h"
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "plugins/spank/hooks.hpp"
#include "plugins/spank/idletime_env.h"
#include "plugins/spank/job_key.hpp"

namespace idletime::spank {
namespace {

std::optional<std::string> proc_getenv(const char *name) {
    const char *v = std::getenv(name);
    if (!v) return std::nullopt;
    return std::string(v);
}

std::string user_name() {
    std::vector<char> buf(16384);
    struct passwd pw, *res = nullptr;
    if (getpwuid_r(getuid(), &pw, buf.data(), buf.size(), &res) != 0 || !res) return "";
    return pw.pw_name;
}

// Asks slurmctld's association cache (one RPC, about 1 ms measured; a slurmdbd query via
// slurmdb_users_get took 85 ms). "" when unknown: the core then asks for --account.
std::string default_account(const std::string &user) {
    assoc_mgr_info_request_msg_t req;
    std::memset(&req, 0, sizeof(req));
    req.flags = ASSOC_MGR_INFO_FLAG_USERS;
    req.user_list = slurm_list_create(nullptr);
    slurm_list_append(req.user_list, const_cast<char *>(user.c_str()));
    assoc_mgr_info_msg_t *msg = nullptr;
    std::string out;
    if (slurm_load_assoc_mgr_info(&req, &msg) == SLURM_SUCCESS && msg && msg->user_list) {
        idletime_list_itr_t it = slurm_list_iterator_create(msg->user_list);
        while (auto *rec = static_cast<slurmdb_user_rec_t *>(slurm_list_next(it)))
            if (rec->name && user == rec->name && rec->default_acct) out = rec->default_acct;
        slurm_list_iterator_destroy(it);
    }
    slurm_free_assoc_mgr_info_msg(msg);
    slurm_list_destroy(req.user_list);
    return out;
}

// The variable this client itself honours for -A (sbatch: SBATCH_ACCOUNT, salloc: SALLOC_ACCOUNT,
// srun: SLURM_ACCOUNT): another client's variable would charge the job to an account it never used.
const char *own_account_var() {
    const char *prog = program_invocation_short_name;
    if (std::strcmp(prog, "sbatch") == 0) return "SBATCH_ACCOUNT";
    if (std::strcmp(prog, "salloc") == 0) return "SALLOC_ACCOUNT";
    return "SLURM_ACCOUNT";
}

std::string account_hint() {
    const char *v = std::getenv(own_account_var());
    if (v && *v) return v;
    std::string user = user_name();
    if (user.empty()) return "";
    auto t0 = std::chrono::steady_clock::now();
    std::string acct = default_account(user);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    slurm_debug("idletime/spank: DefaultAccount of %s is \"%s\" (slurmctld lookup %.2f ms)", user.c_str(),
                acct.c_str(), ms);
    return acct;
}

// srun inside an existing allocation launches a step: there is no job to route.
bool step_in_allocation() {
    return std::getenv("SLURM_JOB_ID") && std::strcmp(program_invocation_short_name, "srun") == 0;
}

}  // namespace

int submit_side(spank_t sp) {
    OptionState &opts = state().options;
    std::string err = opts.load_env(proc_getenv);
    if (!err.empty()) {
        slurm_error("idletime/spank: %s", idletime::log_text(err).c_str());
        return -1;
    }
    if (step_in_allocation()) return 0;
    std::vector<std::pair<std::string, std::string>> vars = opts.control_env();
    // Names the checkpoint directory of an interactive job; job_submit/idletime replaces it with its
    // own (batch jobs: that one is stored with the job and survives requeues).
    if (opts.routing_requested()) {
        vars.emplace_back(IDLETIME_ENV_JOB_KEY, new_job_key());
        // srun launching its own job builds the step's environment from its own, without the job
        // control environment (measured on 22.05): put the key there as sbatch/salloc would.
        setenv(("SLURM_SPANK_" + std::string(IDLETIME_ENV_JOB_KEY)).c_str(), vars.back().second.c_str(), 1);
    }
    // Every submission: a plain job without -p is routed by its account too (SPANK cannot see -p).
    if (opts.account_hint()) {
        std::string acct = account_hint();
        if (!acct.empty()) vars.emplace_back(IDLETIME_ENV_ACCOUNT, acct);
    }
    for (const auto &[name, value] : vars) {
        // An empty value makes sbatch refuse the job; control_env never yields one.
        if (spank_job_control_setenv(sp, name.c_str(), value.c_str(), 1) != ESPANK_SUCCESS) {
            slurm_error("idletime/spank: cannot pass %s to slurmctld", name.c_str());
            return -1;
        }
    }
    return 0;
}

}  // namespace idletime::spank
