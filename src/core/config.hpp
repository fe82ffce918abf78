// The idletime site configuration: tenants, pools, quotas, idle-time and fault-tolerance
// settings, read from one JSON file (idletime.json(5)). Immutable after load.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/ft_settings.hpp"

namespace idletime {

enum class PoolType { General, HighPerformance };

struct NodeShape {
    uint32_t gpus = 0;       // GPUs per node
    uint32_t cpus = 0;       // CPUs per node
    uint64_t memory_mb = 0;  // RealMemory per node, MiB
};

struct Pool {
    std::string name;
    std::string tenant;
    PoolType type = PoolType::General;
    std::string gpu_spec;                // GPU model; required for high-performance pools
    std::string nodes;                   // Slurm hostlist as written
    std::vector<std::string> node_names; // expanded
    NodeShape node;
    uint64_t total_gpus() const { return uint64_t(node.gpus) * node_names.size(); }
    uint64_t total_cpus() const { return uint64_t(node.cpus) * node_names.size(); }
    uint64_t total_memory_mb() const { return node.memory_mb * node_names.size(); }
};

struct Quota {
    std::string name;
    std::string pool;
    uint32_t gpus = 0;        // guaranteed GPUs
    uint32_t cpus = 0;        // guaranteed CPUs (0 = no CPU limit)
    uint64_t memory_mb = 0;   // guaranteed memory, MiB (0 = no memory limit)
    std::vector<std::string> accounts;  // Slurm accounts whose jobs belong to this quota
};

struct Tenant {
    std::string name;
    std::string description;
};

struct IdleSettings {
    uint32_t grace_time_s = 30;           // GraceTime of idle partitions
    std::string checkpoint_signal = "USR1";
    int checkpoint_signo = 10;            // SIGUSR1
    bool requeue = true;                  // preempted idle-time jobs are requeued, not cancelled
    std::string checkpoint_root = "/var/spool/idletime/checkpoints";
    // Seconds a job's checkpoint directory is kept once the job has ended (removed by the
    // EpilogSlurmctld hook, src/hook/retention.cpp); 0 = never removed.
    uint32_t checkpoint_retention_s = 3 * 86400;
    uint32_t quota_priority_tier = 10;    // PriorityTier of quota partitions
    uint32_t idle_priority_tier = 1;      // PriorityTier of idle partitions; must be lower
    std::string idle_qos = "idle";        // QOS of every idle partition
    uint32_t min_run_time_s = 0;          // preempt/idletime: an idle-time job runs this long before it may be preempted
};

// Hardware check of a node (idletime check --node, spank_idletime at slurmd start): what a GPU
// mismatch with the pool spec or the node's Gres does besides being logged.
enum class OnMismatch { Log, Drain };
struct NodeCheckSettings {
    OnMismatch on_mismatch = OnMismatch::Log;
};

struct Config {
    std::vector<Tenant> tenants;
    std::vector<Pool> pools;
    std::vector<Quota> quotas;
    IdleSettings idle;
    FtSettings ft;
    NodeCheckSettings node_check;

    const Tenant *tenant(const std::string &name) const;
    const Pool *pool(const std::string &name) const;
    const Quota *quota(const std::string &name) const;
    const Pool *pool_of(const Quota &q) const { return pool(q.pool); }
};

// Partition names the core renders and recognises: "quota-<quota>" and "idle-<pool>".
inline constexpr std::string_view kQuotaPartitionPrefix = "quota-";
inline std::string quota_partition(std::string_view quota) {
    return std::string(kQuotaPartitionPrefix).append(quota);
}
std::string quota_partition(const Quota &q);
std::string idle_partition(const Pool &p);

// The quota a partition's name renders ("quota-gpu-a" -> "gpu-a"); empty for any other name,
// "quota-" alone included. By name only: whether the quota is configured is Config::quota's.
// A job's partition list ("quota-a,idle-x") is not a name: cut it first.
inline std::string_view quota_of_partition(std::string_view partition) {
    if (partition.size() <= kQuotaPartitionPrefix.size() || partition.rfind(kQuotaPartitionPrefix, 0) != 0) return {};
    return partition.substr(kQuotaPartitionPrefix.size());
}

// Parses and validates JSON text. On failure returns false and fills errors with one-line
// messages, each starting with the JSON path ("$.quotas[1].pool: ...").
bool config_parse(const std::string &json, Config &out, std::vector<std::string> &errors);

// Semantic rules over a parsed config (names, capacity, accounts); appends to errors.
void config_validate(const Config &cfg, std::vector<std::string> &errors);

}  // namespace idletime
