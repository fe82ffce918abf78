// Trace -> job stream for the local cluster (pure: no I/O, no clock, no Slurm).
//
// Rules (doc/replay/README.md explains why):
// - class (IdleRule): a job is idle-time when its QOS name is the rule's (openb default: BE; LS,
//   Burstable, Guaranteed are guaranteed), or its partition is, or (share rule) it is among the
//   share of its account's jobs with the lowest seeded hash (exactly round(share x jobs) per
//   account); every other job is a guaranteed job of its quota.
// - pool: a pod's allowed models are mapped to local GPU specs (model_to_spec); models not in
//   the map are dropped; a pod whose models all drop is skipped. An unconstrained pod (or one
//   allowing several local specs) gets a pool by a seeded hash, weighted by pool capacity.
// - team (QuotaSource): Teams: a seeded hash of the pod name picks one of `teams` quotas in
//   that pool ("<pool>-t<k>"; openb has no tenant field); Accounts: the job's account in that
//   pool ("<pool>-<account>", lower case, other characters -> '_'; beyond max_quotas per pool
//   the accounts with the least demand share "<pool>-other"); Site: the site quota listing the
//   job's account (its pool; jobs of other accounts are dropped, counted as "no quota").
// - GPUs: gpu_milli < 1000 (shared GPU) -> 1 whole GPU (RoundUp) or skipped (Skip).
// - nodes: a job keeps its trace node count (sacct NNodes); with split_gangs a job needing
//   more GPUs than a node (max_gpus_per_job) becomes a gang of whole nodes; GPUs per node are
//   ceil(GPUs / nodes), capped at the node size (counted); a gang larger than its pool is cut
//   to the pool's nodes (counted).
// - sampling: a seeded hash keeps a share `sample` of the pods (scales the load to the cluster).
// - time: only pods running inside [window_start_s, window_start_s + window_len_s) are kept;
//   a pod running at the window start is submitted at offset 0 (carry_over); ends are clipped
//   to the window end; offsets and durations are divided by `compress`; durations are at
//   least min_duration_s.
// - quotas: per pool, each team's time-weighted `quota_percentile` (default p95) of concurrent
//   guaranteed GPUs in the window (Site: the site quota's GPUs); the pool's capacity is shared
//   out in proportion (largest remainder), so the quotas of a pool sum to its capacity; each
//   quota is at least its team's largest job (guaranteed or idle-time, so that with borrowing
//   off every job still fits its quota).
#pragma once
#include "replay/trace.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace idletime::replay {

// Emulated nodes of one local replay cluster (multiple-slurmd on one machine: 64 x 8 GPUs was
// measured to fit 24 GiB, doc/design/notice-and-release.md section 7).
constexpr int kMaxLocalNodes = 64;
constexpr int kMaxNodeGpus = 8;  // GPUs per emulated node

struct LocalPool {
    std::string name;  // pool name, used in quota and partition names ("a100")
    std::string spec;  // GPU spec (GRES type) of its nodes ("a100")
    int gpus = 0;      // capacity, GPUs
};

enum class Fractional { RoundUp, Skip };
enum class JobClass { Guaranteed, Idle };
enum class QuotaSource { Teams, Accounts, Site };
enum class IdleRuleKind { Qos, Partition, Share };

// Which jobs are idle-time (see the rules above).
struct IdleRule {
    IdleRuleKind kind = IdleRuleKind::Qos;
    std::string name = "BE";   // QOS or partition name
    double share = 0.25;       // Share: part of each account's jobs, 0..1
};

// A quota of the site's own idletime.json, its pool already translated to a local pool name.
struct SiteQuota {
    std::string name, pool;
    int gpus = 0;              // guaranteed GPUs at the site (a weight here)
    std::vector<std::string> accounts;
};

const char *job_class_name(JobClass c);

struct MapOptions {
    int64_t window_start_s = 0;       // trace seconds
    int64_t window_len_s = 0;         // trace seconds, > 0
    double compress = 1.0;            // trace seconds per replay second, >= 1
    uint64_t seed = 1;
    int teams = 2;                    // quotas per pool, >= 1
    std::vector<LocalPool> pools;     // at least one
    std::map<std::string, std::string> model_to_spec;  // trace model -> local spec
    Fractional fractional = Fractional::RoundUp;
    int max_gpus_per_job = 4;         // GPUs per node of the local cluster
    bool split_gangs = false;         // jobs larger than a node become gangs of whole nodes
    QuotaSource quota_source = QuotaSource::Teams;
    double quota_percentile = 0.95;   // of concurrent guaranteed GPUs, 0..1
    int max_quotas = 4;               // Accounts: quotas per pool, >= 1
    std::vector<SiteQuota> site_quotas;  // Site
    IdleRule idle;
    double min_duration_s = 3.0;      // replay seconds
    bool carry_over = true;
    double sample = 1.0;              // keep a pod when its seeded hash falls below this share
};

struct ReplayJob {
    std::string id;         // trace pod name
    double submit_s = 0;    // offset from replay start, seconds
    double duration_s = 0;  // work to do, seconds of run time
    int gpus = 1;           // in all (nodes x GPUs per node)
    JobClass cls = JobClass::Guaranteed;
    std::string quota;      // quota (team) the job belongs to
    std::string pool;
    std::string spec;
    int nodes = 1;          // gang of whole nodes, gpus / nodes each
};

struct Quota {
    std::string name;       // "<pool>-t<k>"
    std::string pool;
    int gpus = 0;
    double demand_gpus = 0; // demand that set it (before scaling): the percentile of concurrent
                            // guaranteed GPUs (p95 by default), or the site quota's GPUs
};

// Why pods were dropped or changed; every pod lands in exactly one of the first eight counters.
struct MapStats {
    int pods = 0;
    int kept = 0;
    int no_gpu = 0;
    int never_scheduled = 0;
    int outside_window = 0;
    int sampled_out = 0;
    int unmapped_spec = 0;
    int fractional_skipped = 0;
    int no_quota = 0;             // Site: account in no site quota
    int fractional_rounded = 0;   // kept, shared GPU rounded up to one
    int gpus_capped = 0;          // kept, GPUs per node above max_gpus_per_job
    int gangs = 0;                // kept, more than one node
    int gang_capped = 0;          // kept, more nodes than its pool has
    int gang_rounded_up = 0;      // kept, gang GPUs rounded up to the same count on every node
    int accounts_merged = 0;      // Accounts: accounts folded into "<pool>-other"
    int accounts_renamed = 0;     // Accounts: account names cut to 40 characters of [a-z0-9_.-]
                                  // (two such names may then share a quota)
    int be_capped_to_quota = 0;   // kept, idle-time job larger than its team's quota
    int carried_over = 0;         // kept, running at the window start
    int floored = 0;              // kept, compressed run shorter than min_duration_s (raised)
    int clipped_at_end = 0;       // kept, still running at the window end
    int guaranteed = 0;
    int idle = 0;
};

struct JobStream {
    std::vector<ReplayJob> jobs;   // sorted by submit_s, then id
    std::vector<Quota> quotas;     // by pool, then team
    MapStats stats;
    double span_s = 0;             // window_len_s / compress
};

// Throws std::invalid_argument (one line) for bad options or quotas that cannot fit.
JobStream map_trace(const std::vector<TraceRecord> &records, const MapOptions &opt);

// Time-weighted p-quantile (0..1) of a step function given as (time, delta) changes over
// [t0, t1). Exposed for tests.
double weighted_quantile(std::vector<std::pair<double, int>> changes, double t0, double t1, double p);

// Splits `total` in proportion to `weights` with per-entry minimums (largest remainder).
// Throws std::invalid_argument when the minimums exceed `total`.
std::vector<int> apportion(int total, const std::vector<double> &weights, const std::vector<int> &mins);

// Stable 64-bit FNV-1a of seed and text (same on every platform, unlike std::hash).
uint64_t stable_hash(uint64_t seed, const std::string &text);

}  // namespace idletime::replay
