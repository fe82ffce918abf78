// bench/sched/victims_bench: preempt/idletime's candidate batch under slurmctld's call pattern,
// against the batch it replaced (kept below as the baseline), in the same run.
// Per candidate search of one owner, Slurm 22.05-26.05 calls preemptable() once per running job
// (VictimBatch::note) and then sorts the candidates, asking each comparison for both jobs'
// preempt priority (VictimBatch::rank): about 2 n log2 n rank calls.
// Usage: victims_bench [N [SEARCHES]]   (defaults 2048 running jobs, 200 searches)
// Prints ns per search for both and the ratio baseline/new (higher is better).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unordered_set>
#include <vector>

#include "sched/policy.hpp"

using namespace idletime::sched;

namespace {

// The batch before IdMap (2026-12-06): a node-based set for repeats, ranks by binary search.
class OldBatch {
public:
    void note(uint32_t pre, uint32_t need, const JobView &v, int64_t now) {
        if (!open_ || ranked_ || pre != pre_ || need != need_ || seen_.count(v.job_id)) {
            keys_.clear(), ranks_.clear(), seen_.clear();
            ranked_ = false, open_ = true, pre_ = pre, need_ = need;
        }
        keys_.push_back(victim_key(v, need, now));
        seen_.insert(v.job_id);
    }
    uint32_t rank(uint32_t id) {
        if (!ranked_) {
            std::sort(keys_.begin(), keys_.end(), victim_before);
            ranks_.clear();
            for (size_t i = 0; i < keys_.size(); ++i) ranks_.emplace_back(keys_[i].job_id, uint32_t(i));
            std::sort(ranks_.begin(), ranks_.end());
            ranked_ = true;
        }
        auto it = std::lower_bound(ranks_.begin(), ranks_.end(), std::pair<uint32_t, uint32_t>(id, 0));
        return it != ranks_.end() && it->first == id ? it->second : UINT32_MAX;
    }

private:
    std::vector<VictimKey> keys_;
    std::vector<std::pair<uint32_t, uint32_t>> ranks_;
    std::unordered_set<uint32_t> seen_;
    bool ranked_ = false, open_ = false;
    uint32_t pre_ = 0, need_ = 0;
};

const int64_t kNow = 1800000000;

template <class Batch>
double ns_per_search(Batch &b, const std::vector<JobView> &jobs, int searches, uint64_t &sink) {
    std::vector<uint32_t> order(jobs.size());
    auto t0 = std::chrono::steady_clock::now();
    for (int s = 0; s < searches; ++s) {
        const uint32_t owner = 100000 + uint32_t(s);
        for (const JobView &v : jobs) b.note(owner, 1, v, kNow);
        for (size_t i = 0; i < jobs.size(); ++i) order[i] = jobs[i].job_id;
        std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return b.rank(x) < b.rank(y); });
        sink += order.front();
    }
    std::chrono::duration<double, std::nano> d = std::chrono::steady_clock::now() - t0;
    return d.count() / searches;
}

}  // namespace

int main(int argc, char **argv) {
    const long n = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 2048;
    const long searches = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 200;
    if (n < 1 || n > 1000000 || searches < 1 || searches > 100000) {
        std::fprintf(stderr, "usage: victims_bench [N 1-1000000 [SEARCHES 1-100000]]\n");
        return 2;
    }
    std::vector<std::string> comments;
    std::vector<JobView> jobs;
    comments.reserve(size_t(n));
    for (long i = 0; i < n; ++i) {
        comments.push_back(i % 3 ? "idletime:ckpt=" + std::to_string(kNow - i % 600) : "");
        JobView v;
        v.job_id = uint32_t(1000 + i * 7);  // array tasks: ids with gaps
        v.partition = "idle-a100-big";
        v.gpus = 1;
        v.start_time = kNow - 3600 + i % 1800;
        v.comment = comments.back();
        jobs.push_back(v);
    }
    uint64_t sink = 0;
    OldBatch old_b;
    VictimBatch new_b;
    ns_per_search(old_b, jobs, 3, sink);  // warm up both
    ns_per_search(new_b, jobs, 3, sink);
    const double t_old = ns_per_search(old_b, jobs, int(searches), sink);
    const double t_new = ns_per_search(new_b, jobs, int(searches), sink);
    std::printf("candidates %ld searches %ld\n", n, searches);
    std::printf("baseline_us_per_search %.1f\nidmap_us_per_search %.1f\n", t_old / 1000, t_new / 1000);
    std::printf("ratio baseline/new %.2fx (sink %llu)\n", t_old / t_new, (unsigned long long) (sink % 10));
    return 0;
}
