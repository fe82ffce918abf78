// Restart decision, backoff and hang detection.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "ft/ft.hpp"

namespace idletime::ft {

const char *action_str(Action a) {
    switch (a) {
    case Action::Complete: return "complete";
    case Action::Restart: return "restart";
    case Action::Fail: return "fail";
    }
    return "?";
}

uint32_t backoff_s(const FtSettings &s, uint32_t n) {
    if (n == 0 || s.backoff_initial_s == 0) return 0;
    double d = double(s.backoff_initial_s) * std::pow(std::max(1.0, s.backoff_factor), n - 1);
    if (!(d < double(s.backoff_max_s))) return s.backoff_max_s;  // also catches inf/nan
    return static_cast<uint32_t>(d);
}

static Decision preempted(const FtSettings &s, const Counters &c) {
    Decision d;
    d.after = c;
    d.after.preemptions = sat_add(d.after.preemptions, 1);
    if (s.max_preemptions > 0 && d.after.preemptions > s.max_preemptions) {
        d.action = Action::Fail;
        d.reason = "max preemptions exceeded (" + std::to_string(s.max_preemptions) + ")";
        return d;
    }
    d.action = Action::Restart;
    d.reason = "preempted (preemption " + std::to_string(d.after.preemptions) + ")";
    return d;
}

static Decision node_failed(const Counters &c) {
    Decision d;
    d.after = c;
    d.after.node_failures = sat_add(d.after.node_failures, 1);
    if (d.after.node_failures > kMaxNodeFailures) {
        d.action = Action::Fail;
        d.reason = "max node failures exceeded (" + std::to_string(kMaxNodeFailures) + ")";
        return d;
    }
    d.action = Action::Restart;
    d.reason = "node failure " + std::to_string(d.after.node_failures) + ", restarting elsewhere";
    return d;
}

// Restarts charged to the --max-restarts budget: failures and time-limit requeues, in 64 bits so
// that a saturated (forged) failure count can never wrap the sum back under the budget.
static uint64_t restarts_used(const Counters &c) {
    return static_cast<uint64_t>(c.failures) + static_cast<uint64_t>(c.time_limits);
}

// Requeued at its time limit only when the job asked for it, within the restart budget.
static Decision time_limit(const FtSettings &s, const Counters &c) {
    Decision d;
    d.after = c;
    d.action = Action::Fail;
    if (!s.requeue_at_time_limit) {
        d.reason = "time limit reached";
        return d;
    }
    if (restarts_used(c) >= s.max_restarts) {
        d.reason = "max restarts exceeded (last cause: time limit reached)";
        return d;
    }
    d.after.time_limits = sat_add(d.after.time_limits, 1);
    d.action = Action::Restart;
    d.reason = "requeued at its time limit (--requeue-at-time-limit, restart " +
               std::to_string(restarts_used(d.after)) + "/" +
               std::to_string(s.max_restarts) + ")";
    return d;
}

Decision decide(const FtSettings &s, const Counters &c, const Classification &cl) {
    Decision d;
    d.after = c;
    switch (cl.verdict) {
    case Verdict::Success:
        d.action = Action::Complete;
        d.reason = "completed";
        return d;
    case Verdict::Preempted:
        return preempted(s, c);
    case Verdict::NodeFailure:
        return node_failed(c);
    case Verdict::TimeLimit:
        return time_limit(s, c);
    case Verdict::Permanent:
        d.action = Action::Fail;
        d.reason = "permanent failure: " + cl.reason;
        return d;
    case Verdict::Retryable:
        break;
    }
    if (restarts_used(c) >= s.max_restarts) {
        d.action = Action::Fail;
        d.reason = "max restarts exceeded (last cause: " + cl.reason + ")";
        return d;
    }
    d.after.failures = sat_add(d.after.failures, 1);
    d.action = Action::Restart;
    d.delay_s = backoff_s(s, d.after.failures);
    d.reason = "restart " + std::to_string(d.after.failures) + "/" +
               std::to_string(s.max_restarts) + " after " + std::to_string(d.delay_s) +
               " s: " + cl.reason;
    return d;
}

bool parse_heartbeat(const std::string &text, Heartbeat &out) {
    std::istringstream in(text);
    long long step = -1, t = -1;
    int saving = -1;
    std::string rest;
    if (!(in >> step >> t >> saving) || step < 0 || t < 0 || (saving != 0 && saving != 1))
        return false;
    if (in >> rest) return false;  // trailing garbage
    out = Heartbeat{uint64_t(step), int64_t(t), saving == 1};
    return true;
}

HangCheck hang_check(uint32_t timeout_s, const Activity &a, int64_t now) {
    HangCheck h;
    int64_t last = std::max({a.started, a.last_output, a.last_heartbeat});
    h.silent_s = now > last ? now - last : 0;
    if (timeout_s == 0) return h;
    if (a.saving) {
        h.next_check = now + 1;  // re-check as soon as the save may have ended
        return h;
    }
    h.hung = h.silent_s >= int64_t(timeout_s);
    h.next_check = h.hung ? now : last + timeout_s;
    return h;
}

}  // namespace idletime::ft
