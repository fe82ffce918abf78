#include "plugins/job_submit/decide.hpp"

#include <slurm/slurm_errno.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>
#include <string_view>

#include "plugins/spank/idletime_env.h"
#include "core/config.hpp"
#include "sched/policy.hpp"

namespace idletime::jobsubmit {
namespace {

std::optional<std::string> opt_str(const char *s) {
    if (!s || !*s) return std::nullopt;
    return std::string(s);
}

// "NAME=value" or "SPANK_NAME=value" (Slurm prefixes SPANK_ when it hands the list to scripts).
std::optional<std::string> spank_value(const job_desc_msg_t *d, const char *name) {
    const size_t n = std::strlen(name);
    for (uint32_t i = 0; d->spank_job_env && i < d->spank_job_env_size; ++i) {
        const char *e = d->spank_job_env[i];
        if (!e) continue;
        if (std::strncmp(e, "SPANK_", 6) == 0) e += 6;
        if (std::strncmp(e, name, n) == 0 && e[n] == '=') return std::string(e + n + 1);
    }
    return std::nullopt;
}

std::vector<std::string> split(std::string_view s, char sep) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= s.size()) {
        size_t end = s.find(sep, start);
        if (end == std::string_view::npos) end = s.size();
        if (end > start) out.emplace_back(s.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

Decision reject(ErrorKind kind, std::string msg) {
    Decision d;
    d.action = Action::Reject;
    d.error = kind;
    d.message = "idletime: " + std::move(msg);
    return d;
}

using ResolutionPtr = std::unique_ptr<idletime_resolution_t, decltype(&idletime_resolution_free)>;

// Which rule failed: the core gives one message; we only need the Slurm errno and it is
// derivable from the inputs (quota unknown? still failing without the GPU spec?).
ErrorKind classify(const idletime_config_t *cfg, idletime_request_t req) {
    if (req.quota) {
        std::string part = quota_partition(std::string_view(req.quota));
        if (idletime_partition_kind(cfg, part.c_str(), nullptr) != IDLETIME_PART_QUOTA) return ErrorKind::Quota;
    }
    if (!req.gpu_spec) return ErrorKind::Account;
    req.gpu_spec = nullptr;
    idletime_resolution_t *res = nullptr;
    if (idletime_resolve(cfg, &req, &res, nullptr, 0) != 0) return ErrorKind::Account;
    idletime_resolution_free(res);
    return ErrorKind::GpuSpec;
}

// A job that names -p keeps it only if every partition is one the policy would choose.
std::optional<std::string> disagreeing_partition(const std::string &mine, const std::string &policy) {
    std::vector<std::string> allowed = split(policy, ',');
    for (const std::string &p : split(mine, ','))
        if (std::find(allowed.begin(), allowed.end(), p) == allowed.end()) return p;
    return std::nullopt;
}

void add_notice(const idletime_config_t *cfg, idletime_mode_t mode, bool batch, Decision &d) {
    if (mode == IDLETIME_MODE_NONE) return;
    idletime_idle_settings_t s{};
    idletime_config_idle_settings(cfg, &s);
    if (s.checkpoint_signal <= 0) return;
    d.notice = true;
    d.warn_signal = static_cast<uint16_t>(s.checkpoint_signal);
    d.warn_time = static_cast<uint16_t>(std::min<uint32_t>(s.grace_time_s, 0xfffe));
    d.warn_flags = batch ? (KILL_FULL_JOB | KILL_JOB_BATCH) : 0;
}

}  // namespace

Submission view_of(const job_desc_msg_t *desc) {
    Submission s;
    s.mode = spank_value(desc, IDLETIME_ENV_MODE);
    s.quota = spank_value(desc, IDLETIME_ENV_QUOTA);
    s.account_hint = spank_value(desc, IDLETIME_ENV_ACCOUNT);
    s.account = opt_str(desc->account);
    s.batch = desc->script != nullptr;
    s.partition = opt_str(desc->partition);
    for (const char *t : {desc->tres_per_job, desc->tres_per_node, desc->tres_per_socket, desc->tres_per_task})
        if (t && *t) s.tres.emplace_back(t);
    return s;
}

std::vector<std::string> gpu_types(const std::vector<std::string> &tres) {
    std::vector<std::string> out;
    for (const std::string &list : tres)
        for (std::string tok : split(list, ',')) {
            for (const char *prefix : {"gres:", "gres/"})
                if (tok.rfind(prefix, 0) == 0) tok.erase(0, 5);
            std::vector<std::string> f = split(tok, ':');  // gpu[:type][:count]
            if (f.size() < 2 || f[0] != "gpu" || std::isdigit(static_cast<unsigned char>(f[1][0]))) continue;
            if (std::find(out.begin(), out.end(), f[1]) == out.end()) out.push_back(f[1]);
        }
    return out;
}

// Routing of a job with idletime options, or of a plain job of a quota account (mode none).
static Decision route(const idletime_config_t *cfg, const Submission &sub) {
    idletime_request_t req{};
    char err[512] = "";
    if (idletime_mode_parse(sub.mode ? sub.mode->c_str() : "none", &req.mode, err, sizeof(err)) != 0)
        return reject(ErrorKind::Mode, err);
    std::vector<std::string> types = gpu_types(sub.tres);
    if (types.size() > 1)
        return reject(ErrorKind::GpuSpec, "the job asks for GPU types " + types[0] + " and " + types[1] +
                                              "; an idletime job may ask for one GPU type");
    // -A / SBATCH_ACCOUNT, else slurmctld's DefaultAccount, else the hint spank/idletime sent.
    const std::optional<std::string> &account =
        sub.account ? sub.account : (sub.default_account ? sub.default_account : sub.account_hint);
    req.quota = sub.quota ? sub.quota->c_str() : nullptr;
    req.account = account ? account->c_str() : nullptr;
    req.gpu_spec = types.empty() ? nullptr : types[0].c_str();
    idletime_resolution_t *raw = nullptr;
    if (idletime_resolve(cfg, &req, &raw, err, sizeof(err)) != 0) return reject(classify(cfg, req), err);
    ResolutionPtr res(raw, idletime_resolution_free);
    Decision d;
    d.action = Action::Apply;
    d.partitions = idletime_resolution_partitions(res.get());
    d.quota = idletime_resolution_quota(res.get());
    if (sub.partition) {
        if (std::optional<std::string> bad = disagreeing_partition(*sub.partition, d.partitions))
            return reject(ErrorKind::Partition, "partition \"" + *bad + "\" does not fit --idle-resources=" +
                                                    idletime_mode_name(req.mode) + " of quota \"" + d.quota +
                                                    "\" (its partitions: " + d.partitions + "); drop -p or name only those");
        d.partitions = *sub.partition;
    }
    if (!sub.account && account) d.set_account = *account;
    if (!sub.mode) d.job_env.emplace_back(IDLETIME_ENV_MODE, idletime_mode_name(req.mode));
    if (!sub.quota) d.job_env.emplace_back(IDLETIME_ENV_QUOTA, d.quota);
    d.requeue = idletime_resolution_requeue(res.get()) != 0;
    add_notice(cfg, req.mode, sub.batch, d);
    d.admin_comment = std::string("idletime-ft:{\"v\":1,\"m\":\"") + idletime_mode_name(req.mode) + "\"}";
    d.summary = std::string("mode=") + idletime_mode_name(req.mode) + " quota=" + d.quota +
                " account=" + (account ? *account : "?") + " partitions=" + d.partitions;
    return d;
}

bool is_plain_unrouted(const Submission &sub) { return !sub.mode && !sub.quota && !sub.partition; }

bool needs_account(const Submission &sub) { return !sub.account && (sub.mode || sub.quota || !sub.partition); }

Decision decide(const idletime_config_t *cfg, const Submission &sub) {
    if (sub.mode || sub.quota) {
        if (!cfg) return reject(ErrorKind::NoConfig, "no valid idletime config is loaded; ask the administrator");
        return route(cfg, sub);
    }
    if (sub.partition || !cfg) return Decision{};  // -p of its own (or no config): exactly as before
    const std::optional<std::string> &account =
        sub.account ? sub.account : (sub.default_account ? sub.default_account : sub.account_hint);
    if (account && idletime_account_has_quota(cfg, account->c_str())) return route(cfg, sub);
    if (sub.default_partition &&
        idletime_partition_kind(cfg, sub.default_partition->c_str(), nullptr) == IDLETIME_PART_UNKNOWN)
        return Decision{};  // the site's own default partition takes it, as before idletime
    const char *accounts = idletime_config_quota_accounts(cfg);
    const std::string who = account ? "account \"" + *account + "\" has no idletime quota" : "the job's account is not known";
    return reject(ErrorKind::Account, "no partition given and " + who +
                                          "; submit with -A ACCOUNT of a quota (accounts with quotas: " +
                                          (*accounts ? accounts : "none") + ") or name a partition with -p");
}

Decision decide_modify(const idletime_config_t *cfg, const char *partition, bool admin) {
    if (!cfg || admin || !partition || !*partition) return Decision{};
    for (const std::string &p : split(partition, ','))
        if (idletime_partition_kind(cfg, p.c_str(), nullptr) != IDLETIME_PART_UNKNOWN)
            return reject(ErrorKind::Modify, "partition \"" + p + "\" is managed by idletime: its partitions are " +
                                                 "chosen at submission (--idle-resources, --quota); resubmit instead");
    return Decision{};
}

int slurm_rc(ErrorKind kind) {
    switch (kind) {
    case ErrorKind::None: return SLURM_SUCCESS;
    case ErrorKind::Quota: return ESLURM_INVALID_QOS;  // a quota is realised as a QOS
    case ErrorKind::Account: return ESLURM_INVALID_ACCOUNT;
    case ErrorKind::GpuSpec: return ESLURM_INVALID_GRES_TYPE;
    case ErrorKind::Partition:
    case ErrorKind::Mode: return ESLURM_INVALID_PARTITION_NAME;
    case ErrorKind::NoConfig: return ESLURM_PLUGIN_INCOMPLETE;
    case ErrorKind::Modify: return ESLURM_ACCESS_DENIED;  // scontrol prints only the errno text
    case ErrorKind::Internal: break;
    }
    return SLURM_ERROR;
}

std::optional<std::string> sanitize_ckpt_claim(const char *comment, int64_t now, bool at_submit) {
    int64_t t = 0;
    if (!comment || !std::strstr(comment, sched::kCkptToken.data())) return std::nullopt;
    const bool has = sched::claimed_checkpoint(comment, t);
    if (at_submit) {
        // Remove every token: no claim can be true before the job ran.
        std::string c = comment;
        for (size_t pos; (pos = c.find(sched::kCkptToken)) != std::string::npos;) {
            size_t end = pos;
            while (end < c.size() && !std::strchr(" \t,;\n", c[end])) ++end;
            c.erase(pos, end - pos);
        }
        return c;
    }
    if (has && t >= now - kCkptClaimSlack && t <= now + kCkptClaimSlack) return std::nullopt;
    return sched::with_checkpoint(comment, now);
}

}  // namespace idletime::jobsubmit
