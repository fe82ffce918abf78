// Who may preempt whom (see policy.hpp). Quota partitions preempt idle-time jobs only on their
// own pool: exactly the jobs partition_prio lets them take with the rendered tiers, because
// quota-<q> and idle-<pool of q> cover the same nodes and other idle partitions cover none of them.
#include "sched/policy.hpp"

#include "core/resolve.hpp"

namespace idletime::sched {

Policy::Policy(std::shared_ptr<const Config> cfg, Settings settings)
    : cfg_(std::move(cfg)), settings_(settings) {
    if (!cfg_) return;
    for (const Quota &q : cfg_->quotas)
        parts_[quota_partition(q)] = PartInfo{Kind::Guaranteed, &q, cfg_->pool_of(q)};
    for (const Pool &p : cfg_->pools) parts_[idle_partition(p)] = PartInfo{Kind::Idle, nullptr, &p};
}

PartInfo Policy::part(std::string_view name) const {
    auto it = parts_.find(name);
    return it == parts_.end() ? PartInfo{} : it->second;
}

bool Policy::partitions_may_preempt(std::string_view a, uint32_t ta, std::string_view b, uint32_t tb,
                                    bool off) const {
    const PartInfo pa = part(a), pb = part(b);
    if (off || pb.kind == Kind::Guaranteed) return false;  // nothing preempts a guaranteed job
    if (pa.kind == Kind::Idle && pb.kind == Kind::Idle) return false;
    if (pa.kind == Kind::Guaranteed && pb.kind == Kind::Idle) return pa.pool && pa.pool == pb.pool;
    return ta > tb;  // unmanaged on either side: partition_prio's rule
}

bool Policy::may_preempt(const JobView &preemptor, const JobView &preemptee, int64_t now) const {
    if (!partitions_may_preempt(preemptor.partition, preemptor.priority_tier, preemptee.partition,
                                preemptee.priority_tier, preemptee.preempt_off))
        return false;
    // A victim already notified belongs to the preemptor that picked it (issue 14): one that has
    // picked none yet must take its own, or N owners at once would all wait on the first one's
    // victims and run one after another. A preemptor that has picked keeps its own victims.
    if (preemptee.preempt_time != 0 && preemptor.preempt_start == 0) return false;
    if (settings_.min_run_time_s && part(preemptee.partition).kind == Kind::Idle && preemptee.start_time > 0 &&
        now - preemptee.start_time < int64_t(settings_.min_run_time_s))
        return false;
    return true;
}

namespace {

template <class F>
void each_partition(const JobView &job, F &&f) {
    std::string_view list = job.partitions.empty() ? job.partition : job.partitions;
    while (!list.empty()) {
        size_t comma = list.find(',');
        std::string_view one = list.substr(0, comma);
        if (!one.empty()) f(one);
        list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    }
}

bool lists(const Quota &q, std::string_view account) {
    for (const std::string &a : q.accounts)
        if (a == account) return true;
    return false;
}

}  // namespace

bool Policy::idle_only(const JobView &job) const {
    bool any = false, all = true;
    each_partition(job, [&](std::string_view p) {
        any = true;
        all = all && part(p).kind == Kind::Idle;
    });
    return any && all;
}

const Quota *Policy::quota_of(const JobView &job) const {
    if (!cfg_) return nullptr;
    if (!job.quota_hint.empty())
        for (const Quota &q : cfg_->quotas)
            if (q.name == job.quota_hint) return &q;
    const Pool *where = part(job.partition).pool;
    const Quota *first = nullptr;
    for (const Quota &q : cfg_->quotas) {
        if (job.account.empty() || !lists(q, job.account)) continue;
        if (!first) first = &q;
        if (!where) continue;
        for (const Pool *p : borrowable_pools(*cfg_, q))
            if (p == where) return &q;  // the account's quota that may borrow this pool
    }
    return first;
}

}  // namespace idletime::sched
