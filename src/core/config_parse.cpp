// JSON -> Config. Shape and types only; cross-object rules live in config_validate.cpp.
#include <json-c/json.h>

#include <csignal>
#include <memory>

#include "core/config.hpp"
#include "core/hostlist.hpp"
#include "core/json_reader.hpp"
#include "core/signals.hpp"

namespace idletime {
namespace {

void parse_tenant(JsonReader &r, json_object *o, const std::string &p, Config &cfg) {
    Tenant t;
    if (!r.object(o, p, {"name", "description"})) return;
    r.str(o, p, "name", t.name, true);
    json_object *d = nullptr;
    if (json_object_object_get_ex(o, "description", &d)) r.str(o, p, "description", t.description, false);
    cfg.tenants.push_back(t);
}

void parse_pool(JsonReader &r, json_object *o, const std::string &p, Config &cfg) {
    Pool pool;
    if (!r.object(o, p, {"name", "tenant", "type", "gpu_spec", "nodes", "node"})) return;
    r.str(o, p, "name", pool.name, true);
    r.str(o, p, "tenant", pool.tenant, true);
    std::string type;
    r.str(o, p, "type", type, true);
    if (type == "general") pool.type = PoolType::General;
    else if (type == "high-performance") pool.type = PoolType::HighPerformance;
    else if (!type.empty())
        r.error(p + ".type", "\"" + type + "\" is not allowed (use \"general\" or \"high-performance\")");
    if (json_object_object_get_ex(o, "gpu_spec", nullptr)) r.str(o, p, "gpu_spec", pool.gpu_spec, false);
    r.str(o, p, "nodes", pool.nodes, true);
    std::string err;
    if (!pool.nodes.empty() && !hostlist_expand(pool.nodes, pool.node_names, err))
        r.error(p + ".nodes", err);
    json_object *n = nullptr;
    if (!json_object_object_get_ex(o, "node", &n)) {
        r.error(p + ".node", "is required (per-node gpus, cpus, memory_mb)");
    } else if (r.object(n, p + ".node", {"gpus", "cpus", "memory_mb"})) {
        r.u32(n, p + ".node", "gpus", pool.node.gpus, true, 1024);
        r.u32(n, p + ".node", "cpus", pool.node.cpus, true, 1u << 20);
        r.u64(n, p + ".node", "memory_mb", pool.node.memory_mb, true);
    }
    cfg.pools.push_back(pool);
}

void parse_quota(JsonReader &r, json_object *o, const std::string &p, Config &cfg) {
    Quota q;
    if (!r.object(o, p, {"name", "pool", "gpus", "cpus", "memory_mb", "accounts"})) return;
    r.str(o, p, "name", q.name, true);
    r.str(o, p, "pool", q.pool, true);
    r.u32(o, p, "gpus", q.gpus, true);
    r.u32(o, p, "cpus", q.cpus, false);
    r.u64(o, p, "memory_mb", q.memory_mb, false);
    r.str_list(o, p, "accounts", q.accounts, true);
    if (q.accounts.empty() && json_object_object_get_ex(o, "accounts", nullptr))
        r.error(p + ".accounts", "must list at least one Slurm account");
    cfg.quotas.push_back(q);
}

// spank/idletime refuses (at every job start) a checkpoint_root with a component that is not
// root's or that others can write; the usual such places are refused here already, by name.
void check_checkpoint_root(JsonReader &r, const std::string &p, const std::string &root) {
    if (root.empty()) return;
    if (root[0] != '/') return r.error(p, "must be an absolute path");
    for (size_t at = 1; at <= root.size();) {
        size_t end = root.find('/', at);
        if (end == std::string::npos) end = root.size();
        const std::string c = root.substr(at, end - at);
        if (c == "." || c == "..")
            return r.error(p, "\"" + root + "\" has a \".\" or \"..\" component (give the real path)");
        at = end + 1;
    }
    for (const char *shared : {"/tmp", "/var/tmp", "/dev/shm"}) {
        const std::string d = shared;
        if (root == d || root.rfind(d + "/", 0) == 0)
            return r.error(p, "\"" + root + "\" is below " + d + ", which users can write (spank/idletime refuses "
                              "it; use a root-owned 0755 directory such as /var/spool/idletime/checkpoints)");
    }
}

void parse_idle(JsonReader &r, json_object *o, const std::string &p, IdleSettings &s) {
    if (!r.object(o, p, {"grace_time", "checkpoint_signal", "requeue", "checkpoint_root", "checkpoint_retention",
                         "quota_priority_tier", "idle_priority_tier", "idle_qos", "min_run_time"}))
        return;
    r.u32(o, p, "grace_time", s.grace_time_s, false, 86400);
    std::string sig = s.checkpoint_signal;
    r.str(o, p, "checkpoint_signal", sig, false);
    int signo = signal_number(sig);
    if (signo <= 0)
        r.error(p + ".checkpoint_signal", "\"" + sig + "\" is not allowed (use " + signal_names() + ")");
    else {
        s.checkpoint_signal = signal_name(signo);
        s.checkpoint_signo = signo;
    }
    r.boolean(o, p, "requeue", s.requeue);
    r.str(o, p, "checkpoint_root", s.checkpoint_root, false);
    check_checkpoint_root(r, p + ".checkpoint_root", s.checkpoint_root);
    r.u32(o, p, "checkpoint_retention", s.checkpoint_retention_s, false, 366 * 86400);
    r.u32(o, p, "quota_priority_tier", s.quota_priority_tier, false, 65533);
    r.u32(o, p, "idle_priority_tier", s.idle_priority_tier, false, 65533);
    r.str(o, p, "idle_qos", s.idle_qos, false);
    r.u32(o, p, "min_run_time", s.min_run_time_s, false, 604800);
}

void parse_policy(JsonReader &r, json_object *o, const std::string &p, FtSettings &s) {
    std::string policy, run_type;
    r.str(o, p, "policy", policy, false);
    if (policy == "none") s.policy = FtPolicy::None;
    else if (policy == "exit-code") s.policy = FtPolicy::ExitCode;
    else if (policy == "exit-code-and-error-msg") s.policy = FtPolicy::ExitCodeAndErrorMsg;
    else if (!policy.empty())
        r.error(p + ".policy", "\"" + policy + "\" is not allowed (use none, exit-code, exit-code-and-error-msg)");
    r.str(o, p, "run_type", run_type, false);
    if (run_type == "sync") s.run_type = RunType::Sync;
    else if (run_type == "async") s.run_type = RunType::Async;
    else if (!run_type.empty()) r.error(p + ".run_type", "\"" + run_type + "\" is not allowed (use sync, async)");
}

void parse_ft(JsonReader &r, json_object *o, const std::string &p, FtSettings &s) {
    if (!r.object(o, p, {"max_restarts", "max_preemptions", "policy", "run_type", "retryable_exit_codes",
                         "permanent_exit_codes", "retryable_patterns", "permanent_patterns",
                         "hang_timeout", "backoff_initial", "backoff_factor", "backoff_max"}))
        return;
    r.u32(o, p, "max_restarts", s.max_restarts, false, 1000);
    r.u32(o, p, "max_preemptions", s.max_preemptions, false, 100000);
    parse_policy(r, o, p, s);
    r.int_list(o, p, "retryable_exit_codes", s.retryable_exit_codes, 1, 255);
    r.int_list(o, p, "permanent_exit_codes", s.permanent_exit_codes, 1, 255);
    r.str_list(o, p, "retryable_patterns", s.retryable_patterns, false);
    r.str_list(o, p, "permanent_patterns", s.permanent_patterns, false);
    r.u32(o, p, "hang_timeout", s.hang_timeout_s, false, 7 * 86400);
    r.u32(o, p, "backoff_initial", s.backoff_initial_s, false, 86400);
    r.number(o, p, "backoff_factor", s.backoff_factor, 1.0, 10.0);
    r.u32(o, p, "backoff_max", s.backoff_max_s, false, 7 * 86400);
}

void parse_node_check(JsonReader &r, json_object *o, const std::string &p, NodeCheckSettings &s) {
    if (!r.object(o, p, {"on_mismatch"})) return;
    std::string v;
    r.str(o, p, "on_mismatch", v, false);
    if (v == "log") s.on_mismatch = OnMismatch::Log;
    else if (v == "drain") s.on_mismatch = OnMismatch::Drain;
    else if (!v.empty())
        r.error(p + ".on_mismatch", "\"" + v + "\" is not allowed (use \"log\" or \"drain\")");
}

void parse_root(JsonReader &r, json_object *root, Config &cfg) {
    if (!r.object(root, "$", {"tenants", "pools", "quotas", "idle", "fault_tolerance", "node_check"})) return;
    r.array(root, "$", "tenants", true, [&](json_object *o, const std::string &p) { parse_tenant(r, o, p, cfg); });
    r.array(root, "$", "pools", true, [&](json_object *o, const std::string &p) { parse_pool(r, o, p, cfg); });
    r.array(root, "$", "quotas", true, [&](json_object *o, const std::string &p) { parse_quota(r, o, p, cfg); });
    json_object *o = nullptr;
    if (json_object_object_get_ex(root, "idle", &o)) parse_idle(r, o, "$.idle", cfg.idle);
    if (json_object_object_get_ex(root, "fault_tolerance", &o)) parse_ft(r, o, "$.fault_tolerance", cfg.ft);
    if (json_object_object_get_ex(root, "node_check", &o)) parse_node_check(r, o, "$.node_check", cfg.node_check);
}

}  // namespace

bool config_parse(const std::string &json, Config &out, std::vector<std::string> &errors) {
    errors.clear();
    out = Config{};
    std::unique_ptr<json_tokener, decltype(&json_tokener_free)> tok(json_tokener_new_ex(64),
                                                                    &json_tokener_free);
    if (!tok) {
        errors.push_back("$: out of memory");
        return false;
    }
    json_tokener_set_flags(tok.get(), JSON_TOKENER_STRICT);
    json_object *root = json_tokener_parse_ex(tok.get(), json.data(), int(json.size()));
    json_tokener_error jerr = json_tokener_get_error(tok.get());
    if (jerr == json_tokener_success && size_t(json_tokener_get_parse_end(tok.get())) < json.size()) {
        std::string rest = json.substr(json_tokener_get_parse_end(tok.get()));
        if (rest.find_first_not_of(" \t\r\n") != std::string::npos) jerr = json_tokener_error_parse_unexpected;
    }
    if (jerr != json_tokener_success || root == nullptr) {
        if (root) json_object_put(root);
        errors.push_back("$: not valid JSON: " + std::string(json_tokener_error_desc(jerr)) + " near byte " +
                         std::to_string(json_tokener_get_parse_end(tok.get())));
        return false;
    }
    JsonReader r(errors);
    parse_root(r, root, out);
    json_object_put(root);
    if (errors.empty()) config_validate(out, errors);
    return errors.empty();
}

}  // namespace idletime
