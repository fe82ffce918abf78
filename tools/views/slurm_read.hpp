// libslurm access of the view tools: copy Slurm's records into the plain structs of src/views.
// Public API only (slurm.h, slurmdb.h); no command output is parsed. Every function returns
// false with a one-line err (Slurm's own error text) on failure.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "views/check.hpp"
#include "views/job.hpp"

namespace idletime::slurmread {

// All jobs slurmctld knows (pending, running, recently finished).
bool load_jobs(std::vector<views::JobInfo> &out, std::string &err);
// One job by id (also finished ones slurmctld still holds).
bool load_job(uint32_t job_id, views::JobInfo &out, std::string &err);

// May uid see node names of jobs on shared idle capacity: root, SlurmUser, or a Slurm
// operator/administrator (AdminLevel >= Operator in slurmdbd). why: "root", "SlurmUser", ...
bool is_operator(uint32_t uid, std::string &why);
// "" when uid sees every job (slurmctld has no PrivateData=jobs, or uid is root, SlurmUser or a
// Slurm operator); else one line saying what it misses and how to fix it (idletime-exporter).
std::string hidden_jobs_warning(uint32_t uid);

// Settings, partitions, QOS limits, accounts and plugstack content of the running cluster.
bool load_cluster(views::ClusterInfo &out, std::string &err);

// Gres of a node as slurmctld reports it ("gpu:a100:4(S:0-1)").
bool node_gres(const std::string &node, std::string &gres, std::string &err);
// scontrol update nodename=NODE state=drain reason=REASON, through slurm_update_node.
bool drain_node(const std::string &node, const std::string &reason, std::string &err);

// One accounting record of a job run (sacct-like, from slurmdbd).
struct RunRow {
    int64_t submit = 0, start = 0, end = 0;
    std::string partition, nodes, state;  // state: "COMPLETED", "PREEMPTED", "REQUEUED", ...
    int wait_status = 0;                  // exit code as a wait(2) status
    uint32_t gpus = 0;
    std::string admin_comment;            // the FT record as stored with this run
};
// Every record of the job id (duplicates included), oldest first.
bool job_runs(uint32_t job_id, std::vector<RunRow> &out, std::string &err);

// AdminComment of the newest accounting record of each job id, in one slurmdbd query. The ft
// hook can store a job's final record only there (slurmctld refuses updates of ended jobs).
bool accounting_admin_comments(const std::vector<uint32_t> &ids, std::map<uint32_t, std::string> &out,
                               std::string &err);

}  // namespace idletime::slurmread
