// Scheduling policy of preempt/idletime and site_factor/idletime: who may preempt whom, in which
// order victims go, and how idle-time jobs are ordered by their quota's borrowing. Slurm-free and
// I/O-free: the plugins copy what they need out of Slurm's job records into JobView and pass the
// current time in, so every decision can be replayed in a unit test.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/config.hpp"
#include "sched/id_map.hpp"

namespace idletime::sched {

// One job as the plugins see it. Views point into Slurm's memory and live for one call.
struct JobView {
    uint32_t job_id = 0;
    std::string_view partition;    // the partition it runs in (or is being tried for)
    std::string_view partitions;   // requested partitions, comma-separated; empty = partition
    uint32_t priority_tier = 0;    // PriorityTier of `partition`
    bool preempt_off = false;      // `partition` has PreemptMode=OFF
    uint32_t gpus = 0;             // allocated GPUs (running) or requested GPUs (pending), whole job
    int64_t start_time = 0;        // unix seconds; 0 = not started
    int64_t submit_time = 0;       // unix seconds
    int64_t preempt_time = 0;      // unix seconds the preemption notice was sent; 0 = none
    int64_t preempt_start = 0;     // preemptor: when it last had victims picked for it; 0 = never
    std::string_view comment;      // job Comment (may carry "idletime:ckpt=<unix>")
    std::string_view account;
    std::string_view quota_hint;   // --quota from the job's SPANK environment; empty = none
};

enum class Kind { Unmanaged, Guaranteed, Idle };

struct PartInfo {
    Kind kind = Kind::Unmanaged;
    const Quota *quota = nullptr;  // Guaranteed: the quota behind quota-<q>
    const Pool *pool = nullptr;    // Guaranteed: the quota's pool; Idle: the pool of idle-<pool>
};

struct Settings {
    uint32_t min_run_time_s = 0;   // an idle-time job runs at least this long before it may be preempted
};

// Immutable once built. A Policy without a config treats every partition as unmanaged and answers
// exactly like preempt/partition_prio (higher PriorityTier preempts lower, PreemptMode=OFF exempt).
class Policy {
public:
    Policy(std::shared_ptr<const Config> cfg, Settings settings);
    const Config *config() const { return cfg_.get(); }
    const Settings &settings() const { return settings_; }

    PartInfo part(std::string_view name) const;
    // May a job of partition `a` (tier ta) ever preempt one of partition `b` (tier tb, off)?
    bool partitions_may_preempt(std::string_view a, uint32_t ta, std::string_view b, uint32_t tb, bool off) const;
    // Full check for one pair, including the minimum run time of idle-time victims.
    bool may_preempt(const JobView &preemptor, const JobView &preemptee, int64_t now) const;
    // The quota an idle-time job borrows for: --quota if it names a quota, else the job's account.
    const Quota *quota_of(const JobView &job) const;
    // Every requested partition is an idle partition (guaranteed capacity never involved).
    bool idle_only(const JobView &job) const;

private:
    std::shared_ptr<const Config> cfg_;
    Settings settings_;
    std::map<std::string, PartInfo, std::less<>> parts_;
};

// Comment token through which a job publishes its last durable checkpoint (unix seconds).
inline constexpr std::string_view kCkptToken = "idletime:ckpt=";

// The first checkpoint token of `comment` and its value (decimal digits only); false if none.
bool claimed_checkpoint(std::string_view comment, int64_t &t);
// Time of the last checkpoint claimed in `comment` when it lies in [start, now]; otherwise (no
// token, garbage, before the start, in the future) `now`: an unproven claim protects nothing.
int64_t last_checkpoint(std::string_view comment, int64_t start, int64_t now);
// `comment` with its checkpoint token set to `t` (added at the end if absent); other text kept.
std::string with_checkpoint(std::string_view comment, int64_t t);

// Order of victims: sunk cost first (already notified), then least work lost
// (GPU-seconds since the last valid published checkpoint; 0 without one), then fewest GPUs beyond the need, then youngest.
struct VictimKey {
    bool notified = false;
    uint64_t lost_gpu_s = 0;
    uint32_t excess_gpus = 0;
    int64_t start_time = 0;
    uint32_t job_id = 0;
};
VictimKey victim_key(const JobView &victim, uint32_t need_gpus, int64_t now);
bool victim_before(const VictimKey &a, const VictimKey &b);

// Candidates of one preemptor, as Slurm offers them one by one, then ranked once (O(n log n)).
// A new batch starts when the preemptor changes, a job repeats, or ranks were handed out.
class VictimBatch {
public:
    void note(uint32_t preemptor_id, uint32_t need_gpus, const JobView &victim, int64_t now);
    // 0 = preempt first. Jobs not in the batch rank after every candidate (UINT32_MAX).
    uint32_t rank(uint32_t job_id);
    size_t size() const { return keys_.size(); }
    // The preemptor whose candidates these are when `victim_id` is one of them, else 0.
    uint32_t preemptor_of(uint32_t victim_id) const { return ids_.contains(victim_id) ? preemptor_ : 0; }

private:
    void restart(uint32_t preemptor_id, uint32_t need_gpus);
    std::vector<VictimKey> keys_;
    IdMap ids_;  // job ids in keys_ (O(1) repeat check) -> their rank once ranked
    bool ranked_ = false, open_ = false;
    uint32_t preemptor_ = 0, need_ = 0;
};

// Nodes held for a guaranteed job whose victims are leaving (doc/design/notice-and-release.md,
// section 8). The plugin makes the victims' nodes the waiting job's required nodes: Slurm's main
// pass then sets aside only those nodes instead of the job's whole partition (fail_by_part), so
// the next owner is looked at in the same pass, and no queued job takes the GPUs the victims free.
// A hold ends when its job no longer pends or was requeued since (restart count moved); else at
// its deadline (the victims' grace time + KillWait + MessageTimeout after the last pick), or, while
// one of its victims is still leaving (notified, running or completing), up to kLeavingMax later:
// ending it earlier would let Slurm pick more victims for the same owner on other nodes.
class Holds {
public:
    static constexpr size_t kMax = 4096;         // more waiting owners fall back to Slurm alone
    static constexpr size_t kMaxVictims = 256;   // victims remembered per hold (then: the deadline)
    static constexpr int64_t kLeavingMax = 600;  // s a hold may outlive its deadline
    // s a hold past its deadline stays once its victims are gone: the GPUs they freed are the
    // owner's until a main pass (once a second) has started it; ending it at the moment they
    // free let backfill start a queued idle-time job there first (doc/design/notice-and-release.md,
    // section 9).
    static constexpr int64_t kSettle = 3;
    // victim_id joins job_id's hold. 1: a new hold; 0: job_id already held, deadline moved to the
    // later one; -1: none (kMax held).
    int begin(uint32_t job_id, uint32_t restarts, int64_t until, uint32_t victim_id);
    bool held(uint32_t job_id) const { return holds_.count(job_id) != 0; }
    // The victims picked for job_id's hold (empty if none).
    std::vector<uint32_t> victims(uint32_t job_id) const;
    // Whether job_id's hold stays now; a hold that ends is forgotten (the caller frees the nodes).
    bool keep(uint32_t job_id, bool pending, uint32_t restarts, bool victims_leaving, int64_t now);
    std::vector<uint32_t> ids() const;
    size_t size() const { return holds_.size(); }

private:
    struct Hold {
        uint32_t restarts = 0;
        int64_t until = 0;
        int64_t gone_since = 0;  // first keep() that saw no victim leaving; 0 while one leaves
        std::vector<uint32_t> victims;
    };
    std::map<uint32_t, Hold> holds_;
};

// Guaranteed jobs for which preempt/idletime asked slurmctld for a scheduling pass at once
// (doc/design/notice-and-release.md, section 10). sbatch never allocates: slurmctld only tests a
// new job at its submission (where Slurm already asks the plugin about its candidates) and picks
// its victims in the next main pass, which its background loop starts once a second at the
// earliest (and not before SchedulerParameters=batch_sched_delay since the last one). The first
// time a guaranteed job has a preemptable candidate, the plugin asks for that pass now.
// Once per job and submission (a requeue is a new submit time), and spaced like Slurm spaces its
// own submission passes: at least gap_s seconds apart (the site's batch_sched_delay), and with
// gap_s = 0 at most kPerSecond a second, so a flood of submissions (or of --test-only calls,
// which Slurm tests the same way) cannot keep the scheduling thread busy back to back. At most
// kMax jobs remembered, each for kForget s. A refused request is not remembered: the job asks
// again at its next look, and meanwhile Slurm's loop applies.
class PassRequests {
public:
    static constexpr size_t kMax = 4096;
    static constexpr int64_t kForget = 600;
    static constexpr uint32_t kPerSecond = 4;
    // Whether to ask for a pass now for job_id, submitted at submit_time (and note that we did).
    bool first(uint32_t job_id, int64_t submit_time, int64_t now, uint32_t gap_s = 0);
    size_t size() const { return asked_.size(); }

private:
    struct Asked {
        int64_t submit_time = 0;
        int64_t at = 0;
    };
    bool rate_ok(int64_t now, uint32_t gap_s);
    bool room(int64_t now);
    std::unordered_map<uint32_t, Asked> asked_;
    int64_t second_ = 0;      // the second of the last request granted
    uint32_t in_second_ = 0;  // requests granted in second_
    int64_t scan_after_ = 0;  // when full: no entry expires before this
};

// GPUs idle-time jobs borrow per quota right now (running jobs in idle partitions).
class Borrowing {
public:
    void reset(int64_t now);
    void add_running(const Policy &policy, const JobView &job);
    uint64_t borrowed(const Quota *q) const;
    int64_t taken_at() const { return taken_at_; }

private:
    std::map<const Quota *, uint64_t> gpus_;
    int64_t taken_at_ = -1;
};

// Site factor of a pending idle-time job (before Slurm's NICE_OFFSET), or false when the job is
// left alone (guaranteed or mixed partitions, unknown quota). Larger goes first:
// (1000 - borrowing level) * 1e6 + age, with level = borrowed/guaranteed in percent (cap 1000)
// and age = seconds since submission (cap 999999). Max 1,000,999,999.
bool site_factor(const Policy &policy, const Borrowing &b, const JobView &job, int64_t now, uint32_t &out);

}  // namespace idletime::sched
