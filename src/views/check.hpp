// `idletime check`: the running cluster compared with what `idletime render` produces for the
// config. Pure: the cluster arrives as plain strings (tools/views/ copies them out of libslurm),
// the expected side is parsed from render_partitions()/quota_grp_tres(), so both go through
// the same code and the comparison is structural (sets, hostlists, numbers), not textual.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/config.hpp"

namespace idletime::views {

struct PartitionInfo {
    std::string name, nodes;         // nodes: Slurm hostlist
    std::string priority_tier;       // decimal
    std::string preempt_mode;        // "OFF", "REQUEUE", "CANCEL", "SUSPEND,GANG"...; "" = inherits
    std::string grace_time;          // seconds, decimal
    std::string qos;                 // "" = none
    std::string allow_accounts;      // comma list; "ALL" = unrestricted
    std::string state;               // "UP", "DOWN", "DRAIN", "INACTIVE"
};

struct ClusterInfo {
    // slurm.conf keys as scontrol show config names them: PreemptType, PreemptMode, JobRequeue,
    // SlurmctldParameters, GresTypes, AccountingStorageTRES, AccountingStorageEnforce,
    // JobSubmitPlugins, PlugStackConfig, KillWait.
    std::map<std::string, std::string> settings;
    std::vector<PartitionInfo> partitions;
    std::map<std::string, std::string> qos_grp_tres;  // QOS name -> GrpTRES with TRES names
    std::set<std::string> accounts;
    bool plugstack_lists_spank = false;  // PlugStackConfig names spank_idletime.so
};

enum class Severity { Mismatch, KnownBad };

struct Finding {
    Severity severity = Severity::Mismatch;
    std::string object;  // "PreemptType", "partition idle-a100-east", "QOS team-a"
    std::string have;    // what the cluster has ("(missing)" when absent)
    std::string want;    // what the config renders
    std::string fix;     // one line: the change that removes the finding
};

// Every difference, in a stable order: global settings, partitions, QOS, accounts, plugins, then
// settings known to break idle-time behaviour. Empty = the cluster agrees with the config.
std::vector<Finding> check_cluster(const Config &cfg, const ClusterInfo &have);

// "PartitionName=x Nodes=y A=B" -> {"PartitionName":"x", "Nodes":"y", "A":"B"}.
std::map<std::string, std::string> parse_conf_line(const std::string &line);

// "cpu=8,mem=16000M,gres/gpu=4" -> {"cpu":"8", ...}; memory normalised to MiB ("16000M").
std::map<std::string, std::string> parse_tres(const std::string &tres);

}  // namespace idletime::views
