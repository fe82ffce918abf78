#include "plugins/spank/options.hpp"

#include <cctype>
#include <cstring>

#include "plugins/spank/idletime_env.h"

namespace idletime::spank {

// One line per option; later issues add theirs here and nowhere else.
const std::array<OptionSpec, kOptionCount> kOptions{{
    {"idle-resources", "MODE", "Idle-time resources: none (guaranteed only), acceptable, only",
     IDLETIME_ENV_IDLE_RESOURCES, "default_idle_resources", IDLETIME_ENV_MODE, ValueKind::Enum,
     "none|acceptable|only", true},
    {"quota", "NAME", "Quota to submit through (default: the one of the job's account)",
     IDLETIME_ENV_QUOTA_OPT, "default_quota", IDLETIME_ENV_QUOTA, ValueKind::Name, nullptr, true},
    {"max-restarts", "N", "Restarts after failures (preemptions are not counted)", "IDLETIME_MAX_RESTARTS",
     "default_max_restarts", "IDLETIME_MAX_RESTARTS", ValueKind::Count, nullptr, false},
    {"ft-policy", "POLICY", "Failures to retry: none, exit-code, exit-code-and-error-msg", "IDLETIME_FT_POLICY",
     "default_ft_policy", "IDLETIME_FT_POLICY", ValueKind::Enum, "none|exit-code|exit-code-and-error-msg", false},
    {"hang-timeout", "SECONDS", "Restart a job silent for this long (0 = off)", "IDLETIME_HANG_TIMEOUT",
     "default_hang_timeout", "IDLETIME_HANG_TIMEOUT", ValueKind::Count, nullptr, false},
    {"run-type", "TYPE", "Restart all workers (sync) or only the failed one (async)", "IDLETIME_RUN_TYPE",
     "default_run_type", "IDLETIME_RUN_TYPE", ValueKind::Enum, "sync|async", false},
    {"requeue-at-time-limit", "[yes|no]", "At its time limit requeue the job (counted as a restart) "
     "instead of ending it TIMEOUT", "IDLETIME_REQUEUE_AT_TIME_LIMIT", "default_requeue_at_time_limit",
     "IDLETIME_REQUEUE_AT_TIME_LIMIT", ValueKind::Enum, "yes|no", false, "yes"},
}};

namespace {

std::string allowed_list(const char *allowed) {
    std::string out;
    for (const char *p = allowed; *p; ++p) out += (*p == '|') ? std::string(", ") : std::string(1, *p);
    return out;
}

bool enum_ok(const char *allowed, std::string_view v) {
    std::string_view all(allowed);
    size_t start = 0;
    while (start <= all.size()) {
        size_t bar = all.find('|', start);
        if (bar == std::string_view::npos) bar = all.size();
        if (all.substr(start, bar - start) == v) return true;
        start = bar + 1;
    }
    return false;
}

bool count_ok(std::string_view v) {
    if (v.empty() || v.size() > 10) return false;
    unsigned long long n = 0;
    for (char c : v) {
        if (!std::isdigit(static_cast<unsigned char>(c))) return false;
        n = n * 10 + static_cast<unsigned>(c - '0');
    }
    return n <= 0xffffffffULL;
}

bool name_ok(std::string_view v) {
    if (v.empty() || v.size() > 64) return false;
    for (char c : v)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') return false;
    return true;
}

}  // namespace

std::string validate(const OptionSpec &spec, std::string_view value, std::string_view source) {
    std::string what = std::string(source) + "=" + std::string(value) + " is invalid";
    switch (spec.kind) {
    case ValueKind::Enum:
        if (enum_ok(spec.allowed, value)) return "";
        return what + " (allowed: " + allowed_list(spec.allowed) + ")";
    case ValueKind::Count:
        if (count_ok(value)) return "";
        return what + " (allowed: a non-negative integer below 2^32)";
    case ValueKind::Name:
        if (name_ok(value)) return "";
        return what + " (allowed: 1-64 letters, digits, '.', '_', '-')";
    }
    return what;
}

std::string OptionState::set_cli(int index, const char *value) {
    if (index < 0 || index >= kOptionCount) return "unknown option index " + std::to_string(index);
    const OptionSpec &spec = kOptions[index];
    std::string v = value ? value : "";
    if (v.empty() && spec.bare) v = spec.bare;  // --requeue-at-time-limit alone
    std::string err = validate(spec, v, std::string("--") + spec.name);
    if (!err.empty()) return err;
    cli_[index] = v;
    return "";
}

std::string OptionState::parse_plugstack(int argc, char *const argv[]) {
    for (int i = 0; i < argc; ++i) {
        std::string_view arg(argv[i] ? argv[i] : "");
        size_t eq = arg.find('=');
        std::string_view key = arg.substr(0, eq), val = eq == arg.npos ? "" : arg.substr(eq + 1);
        if (key == "config" && eq != arg.npos && !val.empty()) {
            config_path_ = std::string(val);
            continue;
        }
        if (key == "munge_socket") {  // a site (or the local cluster) whose munged is not at the default
            if (val.empty() || val[0] != '/')
                return "plugstack argument munge_socket needs an absolute path, not \"" + std::string(val) + "\"";
            munge_socket_ = std::string(val);
            continue;
        }
        if (key == "account_hint") {
            if (val != "yes" && val != "no")
                return "plugstack argument account_hint must be yes or no, not \"" + std::string(val) + "\"";
            account_hint_ = val == "yes";
            continue;
        }
        bool known = false;
        for (int k = 0; k < kOptionCount && !known; ++k) {
            if (key != kOptions[k].default_key) continue;
            known = true;
            std::string err = validate(kOptions[k], val, "plugstack argument " + std::string(key));
            if (!err.empty()) return err;
            def_[k] = std::string(val);
        }
        if (!known) {
            std::string keys = "config, munge_socket, account_hint";
            for (const OptionSpec &s : kOptions) keys += std::string(", ") + s.default_key;
            return "unknown plugstack argument \"" + std::string(arg) + "\" (allowed: " + keys + ", each as KEY=VALUE)";
        }
    }
    return "";
}

std::string OptionState::load_env(const Getenv &getenv_fn) {
    for (int k = 0; k < kOptionCount; ++k) {
        std::optional<std::string> v = getenv_fn(kOptions[k].user_env);
        if (!v) continue;
        std::string err = validate(kOptions[k], *v, kOptions[k].user_env);
        if (!err.empty()) return err;
        env_[k] = *v;
    }
    return "";
}

std::optional<std::string> OptionState::effective(int index) const {
    if (cli_[index]) return cli_[index];
    if (env_[index]) return env_[index];
    return def_[index];
}

bool OptionState::routing_requested() const {
    for (int k = 0; k < kOptionCount; ++k)
        if (kOptions[k].routing && user_given(k)) return true;
    return false;
}

std::vector<std::pair<std::string, std::string>> OptionState::control_env() const {
    std::vector<std::pair<std::string, std::string>> out;
    const bool routing = routing_requested();
    for (int k = 0; k < kOptionCount; ++k) {
        if (kOptions[k].routing && !routing) continue;
        std::optional<std::string> v = effective(k);
        if (!v && k == kIdleResources) v = "none";  // --quota alone means guaranteed only
        if (v && !v->empty()) out.emplace_back(kOptions[k].job_var, *v);
    }
    return out;
}

}  // namespace idletime::spank
