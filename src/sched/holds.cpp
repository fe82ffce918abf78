// Node holds for guaranteed jobs waiting on their victims (see policy.hpp).
#include "sched/policy.hpp"

namespace idletime::sched {

int Holds::begin(uint32_t job_id, uint32_t restarts, int64_t until) {
    auto it = holds_.find(job_id);
    if (it != holds_.end()) {
        if (until > it->second.until) it->second.until = until;
        return 0;
    }
    if (holds_.size() >= kMax) return -1;
    holds_.emplace(job_id, Hold{restarts, until});
    return 1;
}

bool Holds::keep(uint32_t job_id, bool pending, uint32_t restarts, int64_t now) {
    auto it = holds_.find(job_id);
    if (it == holds_.end()) return false;
    if (pending && restarts == it->second.restarts && now < it->second.until) return true;
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
