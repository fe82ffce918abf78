// Fair borrowing: pending idle-time jobs of quotas that borrow less (relative to their size) go
// first; among equals the older submission goes first. Guaranteed jobs are never touched.
#include <algorithm>

#include "sched/policy.hpp"

namespace idletime::sched {

void Borrowing::reset(int64_t now) {
    gpus_.clear();
    taken_at_ = now;
}

void Borrowing::add_running(const Policy &policy, const JobView &job) {
    if (policy.part(job.partition).kind != Kind::Idle || job.gpus == 0) return;
    if (const Quota *q = policy.quota_of(job)) gpus_[q] += job.gpus;
}

uint64_t Borrowing::borrowed(const Quota *q) const {
    auto it = gpus_.find(q);
    return it == gpus_.end() ? 0 : it->second;
}

bool site_factor(const Policy &policy, const Borrowing &b, const JobView &job, int64_t now, uint32_t &out) {
    if (!policy.idle_only(job)) return false;
    JobView where = job;  // pick the quota by the first requested idle partition
    std::string_view list = job.partitions.empty() ? job.partition : job.partitions;
    where.partition = list.substr(0, list.find(','));
    const Quota *q = policy.quota_of(where);
    if (!q) return false;
    const uint64_t used = b.borrowed(q);
    uint64_t level = 1000;
    if (q->gpus > 0) level = std::min<uint64_t>(1000, used * 100 / q->gpus);
    else if (used == 0) level = 0;
    const int64_t age = std::clamp<int64_t>(now - job.submit_time, 0, 999999);
    out = uint32_t((1000 - level) * 1000000 + uint64_t(age));
    return true;
}

}  // namespace idletime::sched
