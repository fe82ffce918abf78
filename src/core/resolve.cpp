#include "core/resolve.hpp"

#include <algorithm>

namespace idletime {
namespace {

std::string join_names(const std::vector<std::string> &v) {
    std::string out;
    for (const std::string &s : v) out += (out.empty() ? "" : ", ") + s;
    return out.empty() ? "none" : out;
}

bool allowed(const Quota &q, const std::string &account) {
    return std::find(q.accounts.begin(), q.accounts.end(), account) != q.accounts.end();
}

bool pick_by_quota(const Config &cfg, const Request &req, const Quota *&out, std::string &err) {
    out = cfg.quota(req.quota);
    if (!out) {
        std::vector<std::string> names;
        for (const Quota &q : cfg.quotas) names.push_back(q.name);
        err = "unknown quota \"" + req.quota + "\" (quotas: " + join_names(names) + ")";
        return false;
    }
    if (!allowed(*out, req.account)) {
        err = "account \"" + req.account + "\" may not use quota \"" + out->name + "\" (allowed accounts: " +
              join_names(out->accounts) + ")";
        return false;
    }
    return true;
}

bool pick_by_account(const Config &cfg, const Request &req, const Quota *&out, std::string &err) {
    std::vector<const Quota *> mine, matching;
    for (const Quota &q : cfg.quotas)
        if (allowed(q, req.account)) mine.push_back(&q);
    if (mine.empty()) {
        err = "account \"" + req.account + "\" has no idletime quota; name one with --quota=NAME";
        return false;
    }
    if (mine.size() == 1) {  // a spec mismatch is explained by check_spec
        out = mine[0];
        return true;
    }
    for (const Quota *q : mine)
        if (req.gpu_spec.empty() || cfg.pool_of(*q)->gpu_spec == req.gpu_spec) matching.push_back(q);
    if (matching.size() == 1) {
        out = matching[0];
        return true;
    }
    std::vector<std::string> names;
    for (const Quota *q : mine) names.push_back(q->name);
    if (matching.empty()) {
        err = "account \"" + req.account + "\" has no quota in a pool of GPU spec \"" + req.gpu_spec +
              "\" (its quotas: " + join_names(names) + ")";
        return false;
    }
    err = "account \"" + req.account + "\" maps to several quotas (" + join_names(names) +
          "); choose one with --quota=NAME or a GPU spec";
    return false;
}

bool check_spec(const Config &cfg, const Quota &q, const Pool &pool, const std::string &spec, std::string &err) {
    if (spec.empty() || spec == pool.gpu_spec) return true;
    if (pool.type == PoolType::General) {
        err = "quota \"" + q.name + "\" is in general pool \"" + pool.name + "\", which can use only its own pool; GPU spec \"" +
              spec + "\" belongs to other pools";
        return false;
    }
    std::vector<std::string> offered;
    for (const Pool &p : cfg.pools)
        if (p.tenant == pool.tenant && !p.gpu_spec.empty() &&
            std::find(offered.begin(), offered.end(), p.gpu_spec) == offered.end())
            offered.push_back(p.gpu_spec);
    if (std::find(offered.begin(), offered.end(), spec) == offered.end())
        err = "GPU spec \"" + spec + "\" is not offered in tenant \"" + pool.tenant + "\" (offered: " + join_names(offered) + ")";
    else
        err = "quota \"" + q.name + "\" is in a pool of GPU spec \"" + pool.gpu_spec + "\"; spec \"" + spec +
              "\" needs a quota of a \"" + spec + "\" pool";
    return false;
}

}  // namespace

bool mode_parse(const std::string &text, Mode &out) {
    if (text == "none") out = Mode::None;
    else if (text == "acceptable") out = Mode::Acceptable;
    else if (text == "only") out = Mode::Only;
    else return false;
    return true;
}

const char *mode_name(Mode m) {
    switch (m) {
    case Mode::None: return "none";
    case Mode::Acceptable: return "acceptable";
    case Mode::Only: return "only";
    }
    return "?";
}

std::string Resolution::partition_list() const {
    std::string out;
    for (const Target &t : targets) out += (out.empty() ? "" : ",") + t.partition;
    return out;
}

std::vector<const Pool *> borrowable_pools(const Config &cfg, const Quota &q) {
    const Pool *own = cfg.pool_of(q);
    std::vector<const Pool *> out;
    if (!own) return out;
    out.push_back(own);
    if (own->type == PoolType::General) return out;
    for (const Pool &p : cfg.pools)
        if (&p != own && p.tenant == own->tenant && p.type == PoolType::HighPerformance && p.gpu_spec == own->gpu_spec)
            out.push_back(&p);
    return out;
}

bool resolve(const Config &cfg, const Request &req, Resolution &out, std::string &err) {
    out = Resolution{};
    if (req.account.empty()) {
        err = "the job's account is not known; pass --account=NAME";
        return false;
    }
    const Quota *q = nullptr;
    if (!(req.quota.empty() ? pick_by_account(cfg, req, q, err) : pick_by_quota(cfg, req, q, err))) return false;
    const Pool *pool = cfg.pool_of(*q);
    if (!check_spec(cfg, *q, *pool, req.gpu_spec, err)) return false;
    out.quota = q;
    out.pool = pool;
    if (req.mode != Mode::Only) out.targets.push_back({quota_partition(*q), false});
    if (req.mode != Mode::None)
        for (const Pool *p : borrowable_pools(cfg, *q)) out.targets.push_back({idle_partition(*p), true});
    out.requeue = req.mode != Mode::None && cfg.idle.requeue;
    return true;
}

}  // namespace idletime
