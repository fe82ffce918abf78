// Scheduling passes asked for new guaranteed jobs (see PassRequests in policy.hpp).
#include <algorithm>
#include <cstdint>

#include "sched/policy.hpp"

namespace idletime::sched {

bool PassRequests::rate_ok(int64_t now, uint32_t gap_s) {
    if (in_second_ && gap_s && now >= second_ && now < second_ + gap_s) return false;
    if (now != second_) {
        second_ = now;
        in_second_ = 0;
    }
    return in_second_ < kPerSecond;
}

// Room for one more entry: forgets expired ones, scanning only once one can have expired.
bool PassRequests::room(int64_t now) {
    if (asked_.size() < kMax) return true;
    if (now < scan_after_) return false;
    int64_t oldest = INT64_MAX;
    for (auto e = asked_.begin(); e != asked_.end();) {
        if (now >= e->second.at + kForget) {
            e = asked_.erase(e);
        } else {
            oldest = std::min(oldest, e->second.at);
            ++e;
        }
    }
    scan_after_ = oldest == INT64_MAX ? 0 : oldest + kForget;
    return asked_.size() < kMax;
}

bool PassRequests::first(uint32_t job_id, int64_t submit_time, int64_t now, uint32_t gap_s) {
    auto it = asked_.find(job_id);
    const bool known = it != asked_.end();
    if (known && it->second.submit_time == submit_time && now < it->second.at + kForget) return false;
    if (!rate_ok(now, gap_s) || (!known && !room(now))) return false;
    ++in_second_;
    if (known)
        it->second = Asked{submit_time, now};  // requeued (a new submission), or long forgotten
    else
        asked_.emplace(job_id, Asked{submit_time, now});
    return true;
}

}  // namespace idletime::sched
