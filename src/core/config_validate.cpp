// Cross-object rules of the config. Every message names the JSON path and what is allowed.
#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>

#include "core/config.hpp"

namespace idletime {
namespace {

std::string at(const char *list, size_t i) { return std::string("$.") + list + "[" + std::to_string(i) + "]"; }

// Slurm names (partitions, QOS, accounts) are safest as [A-Za-z0-9_.-]; '=' or ',' would break slurm.conf.
bool slurm_name_ok(const std::string &s) {
    if (s.empty() || s.size() > 64) return false;
    for (char c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) return false;
    return true;
}

void check_name(const std::string &path, const std::string &name, std::vector<std::string> &errors) {
    if (!name.empty() && !slurm_name_ok(name))
        errors.push_back(path + ".name: \"" + name + "\" is not allowed (1-64 characters of A-Z a-z 0-9 - _ .)");
}

void validate_tenants(const Config &c, std::vector<std::string> &errors) {
    std::set<std::string> seen;
    for (size_t i = 0; i < c.tenants.size(); i++) {
        const Tenant &t = c.tenants[i];
        check_name(at("tenants", i), t.name, errors);
        if (!seen.insert(t.name).second) errors.push_back(at("tenants", i) + ".name: duplicate tenant \"" + t.name + "\"");
        bool has_pool = false;
        for (const Pool &p : c.pools) has_pool = has_pool || p.tenant == t.name;
        if (!has_pool) errors.push_back(at("tenants", i) + ": tenant \"" + t.name + "\" is empty (no pool names it)");
    }
    if (c.tenants.empty()) errors.push_back("$.tenants: must list at least one tenant");
}

void validate_pool(const Config &c, size_t i, std::map<std::string, std::string> &node_owner,
                   std::vector<std::string> &errors) {
    const Pool &p = c.pools[i];
    std::string path = at("pools", i);
    check_name(path, p.name, errors);
    if (!p.tenant.empty() && !c.tenant(p.tenant))
        errors.push_back(path + ".tenant: unknown tenant \"" + p.tenant + "\"");
    if (p.type == PoolType::General && !p.gpu_spec.empty())
        errors.push_back(path + ".gpu_spec: a general pool has no GPU spec (only high-performance pools do)");
    if (p.type == PoolType::HighPerformance && p.gpu_spec.empty())
        errors.push_back(path + ".gpu_spec: is required for a high-performance pool");
    if (p.type == PoolType::HighPerformance && p.node.gpus == 0)
        errors.push_back(path + ".node.gpus: a high-performance pool needs GPUs on its nodes");
    if (!p.gpu_spec.empty() && !slurm_name_ok(p.gpu_spec))
        errors.push_back(path + ".gpu_spec: \"" + p.gpu_spec + "\" is not a valid GRES type (A-Z a-z 0-9 - _ .)");
    for (const std::string &n : p.node_names) {
        auto [it, fresh] = node_owner.emplace(n, p.name);
        if (!fresh && it->second != p.name)
            errors.push_back(path + ".nodes: node \"" + n + "\" is already in pool \"" + it->second + "\"");
    }
}

void validate_pools(const Config &c, std::vector<std::string> &errors) {
    std::set<std::string> seen;
    std::map<std::string, std::string> node_owner;
    for (size_t i = 0; i < c.pools.size(); i++) {
        if (!seen.insert(c.pools[i].name).second)
            errors.push_back(at("pools", i) + ".name: duplicate pool \"" + c.pools[i].name + "\"");
        validate_pool(c, i, node_owner, errors);
    }
}

struct Sum {
    uint64_t gpus = 0, cpus = 0, mem = 0;
};

void validate_quotas(const Config &c, std::vector<std::string> &errors) {
    std::set<std::string> seen;
    std::map<std::string, Sum> per_pool;
    std::map<std::pair<std::string, std::string>, std::string> account_owner;  // (pool, account) -> quota
    for (size_t i = 0; i < c.quotas.size(); i++) {
        const Quota &q = c.quotas[i];
        std::string path = at("quotas", i);
        check_name(path, q.name, errors);
        if (!seen.insert(q.name).second) errors.push_back(path + ".name: duplicate quota \"" + q.name + "\"");
        const Pool *p = c.pool(q.pool);
        if (!q.pool.empty() && !p) errors.push_back(path + ".pool: unknown pool \"" + q.pool + "\"");
        for (const std::string &a : q.accounts) {
            if (!slurm_name_ok(a))
                errors.push_back(path + ".accounts: \"" + a + "\" is not a valid Slurm account name");
            auto [it, fresh] = account_owner.emplace(std::make_pair(q.pool, a), q.name);
            if (!fresh)
                errors.push_back(path + ".accounts: account \"" + a + "\" is already mapped to quota \"" +
                                 it->second + "\" of the same pool \"" + q.pool + "\"");
        }
        if (!p) continue;
        Sum &s = per_pool[p->name];
        s.gpus += q.gpus, s.cpus += q.cpus, s.mem += q.memory_mb;
        if (s.gpus > p->total_gpus())
            errors.push_back(path + ".gpus: quotas of pool \"" + p->name + "\" add up to " + std::to_string(s.gpus) +
                             " GPUs, more than the pool's " + std::to_string(p->total_gpus()));
        if (s.cpus > p->total_cpus())
            errors.push_back(path + ".cpus: quotas of pool \"" + p->name + "\" add up to " + std::to_string(s.cpus) +
                             " CPUs, more than the pool's " + std::to_string(p->total_cpus()));
        if (s.mem > p->total_memory_mb())
            errors.push_back(path + ".memory_mb: quotas of pool \"" + p->name + "\" add up to " + std::to_string(s.mem) +
                             " MiB, more than the pool's " + std::to_string(p->total_memory_mb()));
    }
}

void validate_patterns(const std::vector<std::string> &pats, const char *key, std::vector<std::string> &errors) {
    for (size_t i = 0; i < pats.size(); i++) {
        try {
            std::regex re(pats[i], std::regex::ECMAScript);
        } catch (const std::regex_error &e) {
            errors.push_back(std::string("$.fault_tolerance.") + key + "[" + std::to_string(i) +
                             "]: invalid regular expression \"" + pats[i] + "\" (" + e.what() + ")");
        }
    }
}

void validate_settings(const Config &c, std::vector<std::string> &errors) {
    if (c.idle.idle_priority_tier >= c.idle.quota_priority_tier)
        errors.push_back("$.idle.idle_priority_tier: must be lower than quota_priority_tier (" +
                         std::to_string(c.idle.quota_priority_tier) + ") so quota jobs preempt idle-time jobs");
    if (!slurm_name_ok(c.idle.idle_qos)) errors.push_back("$.idle.idle_qos: not a valid QOS name");
    for (const Quota &q : c.quotas)
        if (q.name == c.idle.idle_qos)
            errors.push_back("$.idle.idle_qos: \"" + q.name + "\" is also a quota name (each quota has its own QOS)");
    if (c.ft.backoff_max_s < c.ft.backoff_initial_s)
        errors.push_back("$.fault_tolerance.backoff_max: must be at least backoff_initial");
    for (int code : c.ft.retryable_exit_codes)
        if (std::find(c.ft.permanent_exit_codes.begin(), c.ft.permanent_exit_codes.end(), code) !=
            c.ft.permanent_exit_codes.end())
            errors.push_back("$.fault_tolerance.retryable_exit_codes: exit code " + std::to_string(code) +
                             " is also in permanent_exit_codes (a code is either retryable or permanent)");
    validate_patterns(c.ft.retryable_patterns, "retryable_patterns", errors);
    validate_patterns(c.ft.permanent_patterns, "permanent_patterns", errors);
}

}  // namespace

void config_validate(const Config &cfg, std::vector<std::string> &errors) {
    validate_tenants(cfg, errors);
    validate_pools(cfg, errors);
    validate_quotas(cfg, errors);
    validate_settings(cfg, errors);
}

}  // namespace idletime
