// Node holds for guaranteed jobs waiting on their victims (see policy.hpp).
#include "sched/policy.hpp"

namespace idletime::sched {

int Holds::begin(uint32_t job_id, uint32_t restarts, int64_t until, uint32_t victim_id) {
    auto it = holds_.find(job_id);
    int rc = 0;
    if (it == holds_.end()) {
        if (holds_.size() >= kMax) return -1;
        it = holds_.emplace(job_id, Hold{restarts, until, 0, {}}).first;
        rc = 1;
    } else if (until > it->second.until) {
        it->second.until = until;
    }
    auto &v = it->second.victims;
    if (v.size() < kMaxVictims) v.push_back(victim_id);
    return rc;
}

std::vector<uint32_t> Holds::victims(uint32_t job_id) const {
    auto it = holds_.find(job_id);
    return it == holds_.end() ? std::vector<uint32_t>{} : it->second.victims;
}

bool Holds::keep(uint32_t job_id, bool pending, uint32_t restarts, bool victims_leaving, int64_t now) {
    auto it = holds_.find(job_id);
    if (it == holds_.end()) return false;
    Hold &h = it->second;
    if (pending && restarts == h.restarts) {
        if (victims_leaving)
            h.gone_since = 0;
        else if (!h.gone_since)
            h.gone_since = now;
        if (now < h.until || (victims_leaving && now < h.until + kLeavingMax) ||
            (!victims_leaving && now < h.gone_since + kSettle))
            return true;
    }
    holds_.erase(it);
    return false;
}

std::vector<uint32_t> Holds::ids() const {
    std::vector<uint32_t> out;
    out.reserve(holds_.size());
    for (const auto &[id, hold] : holds_) out.push_back(id);
    return out;
}

}  // namespace idletime::sched
