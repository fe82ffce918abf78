// Exit classification, pattern matching, settings validation and per-job overrides.
#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <regex>

#include "ft/ft.hpp"

namespace idletime {
namespace {

constexpr size_t kMatchMax = 4096;  // longer lines are cut before matching: regex cost

bool compile(const std::string &pat, std::regex &out, std::string &why) {
    try {
        out = std::regex(pat, std::regex::ECMAScript | std::regex::optimize);
        return true;
    } catch (const std::regex_error &e) {
        why = e.what();
        return false;
    }
}

bool check_codes(const std::vector<int> &codes, const char *field, std::string &err) {
    for (int c : codes) {
        if (c < 1 || c > 255) {
            err = std::string("fault_tolerance.") + field + ": exit code " + std::to_string(c) +
                  " is out of range (allowed 1-255)";
            return false;
        }
    }
    return true;
}

bool check_patterns(const std::vector<std::string> &pats, const char *field, std::string &err) {
    for (size_t i = 0; i < pats.size(); i++) {
        std::regex re;
        std::string why;
        if (pats[i].empty() || !compile(pats[i], re, why)) {
            err = std::string("fault_tolerance.") + field + "[" + std::to_string(i) +
                  "]: invalid regular expression \"" + pats[i] + "\"" +
                  (why.empty() ? std::string(" (empty)") : ": " + why) +
                  " (allowed: a non-empty ECMAScript regex)";
            return false;
        }
    }
    return true;
}

bool parse_count(const std::string &v, uint32_t &out) {
    if (v.empty() || v.size() > 7 || !std::all_of(v.begin(), v.end(), ::isdigit)) return false;
    unsigned long n = std::strtoul(v.c_str(), nullptr, 10);
    if (n > 1000000) return false;
    out = static_cast<uint32_t>(n);
    return true;
}

}  // namespace

bool ft_validate(const FtSettings &s, std::string &err) {
    if (!check_codes(s.retryable_exit_codes, "retryable_exit_codes", err) ||
        !check_codes(s.permanent_exit_codes, "permanent_exit_codes", err))
        return false;
    for (int c : s.retryable_exit_codes) {
        if (std::find(s.permanent_exit_codes.begin(), s.permanent_exit_codes.end(), c) !=
            s.permanent_exit_codes.end()) {
            err = "fault_tolerance: exit code " + std::to_string(c) +
                  " is both retryable and permanent (allowed: in at most one list)";
            return false;
        }
    }
    if (!check_patterns(s.retryable_patterns, "retryable_patterns", err) ||
        !check_patterns(s.permanent_patterns, "permanent_patterns", err))
        return false;
    if (!(s.backoff_factor >= 1.0 && s.backoff_factor <= 100.0)) {
        err = "fault_tolerance.backoff_factor: " + std::to_string(s.backoff_factor) +
              " is out of range (allowed 1-100)";
        return false;
    }
    if (s.backoff_max_s < s.backoff_initial_s) {
        err = "fault_tolerance.backoff_max: " + std::to_string(s.backoff_max_s) +
              " is below backoff_initial " + std::to_string(s.backoff_initial_s) +
              " (allowed: >= backoff_initial)";
        return false;
    }
    return true;
}

namespace ft {

const char *policy_str(FtPolicy p) {
    switch (p) {
    case FtPolicy::None: return "none";
    case FtPolicy::ExitCode: return "exit-code";
    case FtPolicy::ExitCodeAndErrorMsg: return "exit-code-and-error-msg";
    }
    return "?";
}

const char *run_type_str(RunType r) { return r == RunType::Async ? "async" : "sync"; }

bool parse_policy(const std::string &t, FtPolicy &out) {
    for (FtPolicy p : {FtPolicy::None, FtPolicy::ExitCode, FtPolicy::ExitCodeAndErrorMsg}) {
        if (t == policy_str(p)) {
            out = p;
            return true;
        }
    }
    return false;
}

bool parse_run_type(const std::string &t, RunType &out) {
    if (t == "sync") out = RunType::Sync;
    else if (t == "async") out = RunType::Async;
    else return false;
    return true;
}

bool apply_overrides(FtSettings &s, const std::map<std::string, std::string> &kv,
                     std::string &err) {
    FtSettings n = s;
    for (const auto &[k, v] : kv) {
        bool ok = true;
        const char *allowed = "a whole number 0-1000000";
        if (k == "max_restarts") ok = parse_count(v, n.max_restarts);
        else if (k == "max_preemptions") ok = parse_count(v, n.max_preemptions);
        else if (k == "hang_timeout") ok = parse_count(v, n.hang_timeout_s);
        else if (k == "requeue_at_time_limit") {
            ok = v == "yes" || v == "no";
            n.requeue_at_time_limit = v == "yes";
            allowed = "yes, no";
        }
        else if (k == "ft_policy") {
            ok = parse_policy(v, n.policy);
            allowed = "none, exit-code, exit-code-and-error-msg";
        } else if (k == "run_type") {
            ok = parse_run_type(v, n.run_type);
            allowed = "sync, async";
        } else {
            err = "unknown fault-tolerance setting \"" + k +
                  "\" (allowed: max_restarts, max_preemptions, ft_policy, hang_timeout, run_type, "
                  "requeue_at_time_limit)";
            return false;
        }
        if (!ok) {
            err = "invalid " + k + " \"" + v + "\" (allowed: " + allowed + ")";
            return false;
        }
    }
    s = n;
    return true;
}

std::string signal_name(int signo) {
    static const std::pair<int, const char *> names[] = {
        {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},
        {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},   {SIGKILL, "SIGKILL"},
        {SIGUSR1, "SIGUSR1"}, {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"}, {SIGPIPE, "SIGPIPE"},
        {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"}, {SIGXCPU, "SIGXCPU"}};
    for (const auto &[n, name] : names)
        if (n == signo) return name;
    return "";
}

const char *verdict_str(Verdict v) {
    switch (v) {
    case Verdict::Success: return "success";
    case Verdict::Retryable: return "retryable";
    case Verdict::Permanent: return "permanent";
    case Verdict::Preempted: return "preempted";
    case Verdict::NodeFailure: return "node-failure";
    case Verdict::TimeLimit: return "time-limit";
    }
    return "?";
}

struct Matcher::Impl {
    std::vector<std::regex> perm, retry;
};

Matcher::Matcher(const FtSettings &s) : impl_(new Impl) {
    std::string why;
    for (const auto &p : s.permanent_patterns) {
        std::regex re;
        if (compile(p, re, why)) impl_->perm.push_back(std::move(re));
    }
    for (const auto &p : s.retryable_patterns) {
        std::regex re;
        if (compile(p, re, why)) impl_->retry.push_back(std::move(re));
    }
}

Matcher::~Matcher() { delete impl_; }

static int first_match(const std::vector<std::regex> &res, const std::string &line) {
    const std::string cut = line.size() > kMatchMax ? line.substr(0, kMatchMax) : line;
    for (size_t i = 0; i < res.size(); i++) {
        try {
            if (std::regex_search(cut, res[i])) return static_cast<int>(i);
        } catch (const std::regex_error &) {
            // complexity limit hit: treat as no match
        }
    }
    return -1;
}

int Matcher::permanent(const std::string &l) const { return first_match(impl_->perm, l); }
int Matcher::retryable(const std::string &l) const { return first_match(impl_->retry, l); }

static std::string status_text(int code) {
    std::string t = "exit code " + std::to_string(code);
    if (code > 128) {
        std::string n = signal_name(code - 128);
        if (!n.empty()) t += " (" + n + ")";
    }
    return t;
}

static Classification make(Verdict v, std::string kind, std::string reason) {
    return Classification{v, std::move(reason), std::move(kind)};
}

// Error-message rules; nullopt when no line decides.
static std::optional<Classification> by_output(const FtSettings &s, const Matcher &m,
                                               const std::string &status, const ExitInfo &e) {
    for (const auto &l : e.output_lines) {
        int i = m.permanent(l);
        if (i >= 0)
            return make(Verdict::Permanent, "msg",
                        status + ", output matched permanent pattern \"" +
                            s.permanent_patterns[size_t(i)] + "\"");
    }
    for (const auto &l : e.output_lines) {
        int i = m.retryable(l);
        if (i >= 0)
            return make(Verdict::Retryable, "msg",
                        status + ", output matched retryable pattern \"" +
                            s.retryable_patterns[size_t(i)] + "\"");
    }
    return std::nullopt;
}

Classification classify(const FtSettings &s, const Matcher &m, const ExitInfo &e) {
    if (e.cancelled) return make(Verdict::Permanent, "cancel", "cancelled");
    if (e.preempted) return make(Verdict::Preempted, "preempt", "preempted");
    if (e.timeout) return make(Verdict::TimeLimit, "timeout", "time limit reached");
    // Before the exit code and the policy: the run's status says nothing about the job then.
    if (e.node_fail) return make(Verdict::NodeFailure, "node", "node failure");
    const int code = e.signal > 0 ? 128 + (e.signal & 0x7f) : e.exit_code;
    if (code == 0 && !e.hung) return make(Verdict::Success, "ok", "completed");
    std::string status = e.signal > 0 ? "killed by signal " + std::to_string(e.signal) +
                                            " (" + signal_name(e.signal) + ")"
                                      : status_text(code);
    if (e.signal > 0 && signal_name(e.signal).empty())
        status = "killed by signal " + std::to_string(e.signal);
    if (s.policy == FtPolicy::None)
        return make(Verdict::Permanent, "exit", status + ", restart policy none");
    if (e.hung)
        return make(Verdict::Retryable, "hung",
                    "hung: no output or heartbeat for " + std::to_string(e.silent_s) + " s");
    if (s.policy == FtPolicy::ExitCodeAndErrorMsg) {
        if (auto c = by_output(s, m, status, e)) return *c;
    }
    auto in = [code](const std::vector<int> &v) {
        return std::find(v.begin(), v.end(), code) != v.end();
    };
    const char *kind = e.signal > 0 ? "sig" : "exit";
    if (in(s.permanent_exit_codes)) return make(Verdict::Permanent, kind, status);
    if (in(s.retryable_exit_codes)) return make(Verdict::Retryable, kind, status);
    // Unlisted: killed by a signal is retryable, an ordinary error exit is not.
    return make(code > 128 ? Verdict::Retryable : Verdict::Permanent, kind, status);
}

}  // namespace ft
}  // namespace idletime
