// extern "C" shims over the core: the only place C callers meet C++; no exception leaves.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <cerrno>
#include <fstream>
#include <memory>
#include <new>
#include <sstream>

#include "core/config.hpp"
#include "core/resolve.hpp"
#include "idletime/idletime.h"

struct idletime_config {
    idletime::Config cfg;
    std::string quota_accounts;  // every quota's Slurm accounts, ", "-separated, first-seen order
};

struct idletime_resolution {
    idletime::Resolution res;
    std::string partitions;
};

namespace {

int fail(char *err, size_t errlen, const std::string &msg) {
    if (err && errlen) std::snprintf(err, errlen, "%s", msg.c_str());
    return -1;
}

template <class F>
int guarded(char *err, size_t errlen, F &&f) {
    try {
        return f();
    } catch (const std::bad_alloc &) {
        return fail(err, errlen, "out of memory");
    } catch (const std::exception &e) {
        return fail(err, errlen, std::string("internal error: ") + e.what());
    } catch (...) {
        return fail(err, errlen, "internal error");
    }
}

int parse_into(const std::string &text, idletime_config_t **out, char *err, size_t errlen) {
    auto c = std::make_unique<idletime_config>();
    std::vector<std::string> errors;
    if (!idletime::config_parse(text, c->cfg, errors)) {
        std::string msg = errors.empty() ? "invalid config" : errors.front();
        if (errors.size() > 1) msg += " (and " + std::to_string(errors.size() - 1) + " more errors)";
        return fail(err, errlen, msg);
    }
    std::vector<std::string> seen;
    for (const idletime::Quota &q : c->cfg.quotas)
        for (const std::string &a : q.accounts)
            if (std::find(seen.begin(), seen.end(), a) == seen.end()) {
                c->quota_accounts += (seen.empty() ? "" : ", ") + a;
                seen.push_back(a);
            }
    *out = c.release();
    return 0;
}

}  // namespace

extern "C" {

int idletime_config_load(const char *path, idletime_config_t **cfg, char *err, size_t errlen) {
    return guarded(err, errlen, [&] {
        if (!path || !cfg) return fail(err, errlen, "idletime_config_load: NULL argument");
        std::ifstream in(path, std::ios::binary);
        if (!in) return fail(err, errlen, std::string(path) + ": cannot read: " + std::strerror(errno));
        std::ostringstream ss;
        ss << in.rdbuf();
        return parse_into(ss.str(), cfg, err, errlen);
    });
}

int idletime_config_parse(const char *json, size_t len, idletime_config_t **cfg, char *err, size_t errlen) {
    return guarded(err, errlen, [&] {
        if (!json || !cfg) return fail(err, errlen, "idletime_config_parse: NULL argument");
        return parse_into(std::string(json, len), cfg, err, errlen);
    });
}

void idletime_config_free(idletime_config_t *cfg) { delete cfg; }

int idletime_mode_parse(const char *text, idletime_mode_t *mode, char *err, size_t errlen) {
    return guarded(err, errlen, [&] {
        idletime::Mode m;
        if (!text || !mode || !idletime::mode_parse(text, m))
            return fail(err, errlen, "invalid --idle-resources value \"" + std::string(text ? text : "") +
                                         "\" (allowed: none, acceptable, only)");
        *mode = static_cast<idletime_mode_t>(m);
        return 0;
    });
}

const char *idletime_mode_name(idletime_mode_t mode) {
    return idletime::mode_name(static_cast<idletime::Mode>(mode));
}

int idletime_resolve(const idletime_config_t *cfg, const idletime_request_t *req, idletime_resolution_t **res,
                     char *err, size_t errlen) {
    return guarded(err, errlen, [&] {
        if (!cfg || !req || !res) return fail(err, errlen, "idletime_resolve: NULL argument");
        if (req->mode < IDLETIME_MODE_NONE || req->mode > IDLETIME_MODE_ONLY)
            return fail(err, errlen, "invalid mode (allowed: none, acceptable, only)");
        idletime::Request r;
        r.quota = req->quota ? req->quota : "";
        r.account = req->account ? req->account : "";
        r.mode = static_cast<idletime::Mode>(req->mode);
        r.gpu_spec = req->gpu_spec ? req->gpu_spec : "";
        auto out = std::make_unique<idletime_resolution>();
        std::string msg;
        if (!idletime::resolve(cfg->cfg, r, out->res, msg)) return fail(err, errlen, msg);
        out->partitions = out->res.partition_list();
        *res = out.release();
        return 0;
    });
}

void idletime_resolution_free(idletime_resolution_t *res) { delete res; }
const char *idletime_resolution_partitions(const idletime_resolution_t *res) { return res->partitions.c_str(); }
const char *idletime_resolution_quota(const idletime_resolution_t *res) { return res->res.quota->name.c_str(); }
const char *idletime_resolution_tenant(const idletime_resolution_t *res) { return res->res.pool->tenant.c_str(); }
int idletime_resolution_requeue(const idletime_resolution_t *res) { return res->res.requeue ? 1 : 0; }

idletime_part_kind_t idletime_partition_kind(const idletime_config_t *cfg, const char *partition,
                                             const char **owner_name) {
    if (!cfg || !partition) return IDLETIME_PART_UNKNOWN;
    for (const idletime::Quota &q : cfg->cfg.quotas)
        if (idletime::quota_partition(q) == partition) {
            if (owner_name) *owner_name = q.name.c_str();
            return IDLETIME_PART_QUOTA;
        }
    for (const idletime::Pool &p : cfg->cfg.pools)
        if (idletime::idle_partition(p) == partition) {
            if (owner_name) *owner_name = p.name.c_str();
            return IDLETIME_PART_IDLE;
        }
    return IDLETIME_PART_UNKNOWN;
}

int idletime_account_has_quota(const idletime_config_t *cfg, const char *account) {
    if (!cfg || !account) return 0;
    for (const idletime::Quota &q : cfg->cfg.quotas)
        if (std::find(q.accounts.begin(), q.accounts.end(), account) != q.accounts.end()) return 1;
    return 0;
}

const char *idletime_config_quota_accounts(const idletime_config_t *cfg) {
    return cfg ? cfg->quota_accounts.c_str() : "";
}

void idletime_config_idle_settings(const idletime_config_t *cfg, idletime_idle_settings_t *out) {
    if (!cfg || !out) return;
    const idletime::IdleSettings &s = cfg->cfg.idle;
    out->grace_time_s = s.grace_time_s;
    out->checkpoint_signal = s.checkpoint_signo;
    out->checkpoint_signal_name = s.checkpoint_signal.c_str();
    out->requeue = s.requeue ? 1 : 0;
    out->checkpoint_root = s.checkpoint_root.c_str();
}

}  // extern "C"
