// Victim order and the per-preemptor candidate batch (see policy.hpp).
#include <algorithm>
#include <climits>
#include <tuple>

#include "sched/policy.hpp"

namespace idletime::sched {

VictimKey victim_key(const JobView &v, uint32_t need_gpus, int64_t now) {
    VictimKey k;
    k.notified = v.preempt_time != 0;
    const int64_t start = v.start_time > 0 ? v.start_time : now;
    const int64_t since = now - last_checkpoint(v.comment, start, now);
    k.lost_gpu_s = uint64_t(since > 0 ? since : 0) * v.gpus;
    k.excess_gpus = v.gpus > need_gpus ? v.gpus - need_gpus : 0;
    k.start_time = v.start_time;
    k.job_id = v.job_id;
    return k;
}

bool victim_before(const VictimKey &a, const VictimKey &b) {
    // notified first; smaller loss; smaller excess; younger (later start); higher id (newer).
    return std::tuple(!a.notified, a.lost_gpu_s, a.excess_gpus, -a.start_time, UINT32_MAX - a.job_id) <
           std::tuple(!b.notified, b.lost_gpu_s, b.excess_gpus, -b.start_time, UINT32_MAX - b.job_id);
}

void VictimBatch::restart(uint32_t preemptor_id, uint32_t need_gpus) {
    keys_.clear();
    ids_.clear();
    ranked_ = false;
    open_ = true;
    preemptor_ = preemptor_id;
    need_ = need_gpus;
}

void VictimBatch::note(uint32_t preemptor_id, uint32_t need_gpus, const JobView &victim, int64_t now) {
    // Slurm visits each job once per candidate search: a repeat means a new search.
    if (!open_ || ranked_ || preemptor_id != preemptor_ || need_gpus != need_ || ids_.contains(victim.job_id))
        restart(preemptor_id, need_gpus);
    // Allocate first: an allocation that fails leaves keys_ and ids_ agreeing (the job is then
    // not a candidate; capi.cpp catches the bad_alloc).
    if (keys_.size() == keys_.capacity()) keys_.reserve(keys_.capacity() * 2 + 64);
    ids_.put(victim.job_id, UINT32_MAX);
    keys_.push_back(victim_key(victim, need_gpus, now));  // no allocation: capacity reserved
}

uint32_t VictimBatch::rank(uint32_t job_id) {
    if (!ranked_) {
        std::sort(keys_.begin(), keys_.end(), victim_before);
        for (size_t i = 0; i < keys_.size(); ++i) ids_.put(keys_[i].job_id, uint32_t(i));  // no growth: all present
        ranked_ = true;
    }
    const uint32_t *r = ids_.find(job_id);
    return r ? *r : UINT32_MAX;
}

}  // namespace idletime::sched
