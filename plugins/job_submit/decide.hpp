// job_submit/idletime decision: a plain view of the submission in, a plain decision out.
// Reads job_desc_msg_t fields but calls no Slurm function, so unit tests and the benchmark use it
// exactly as slurmctld does; job_submit_idletime.cpp only writes the decision back.
#pragma once
#include <slurm/slurm.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "idletime/idletime.h"

namespace idletime::jobsubmit {

struct Submission {
    std::optional<std::string> mode, quota, account_hint;  // from spank_job_env
    std::optional<std::string> account, partition;         // job_desc->account, ->partition
    // The user's DefaultAccount from slurmctld's association cache (ctld_account.h), filled by the
    // glue only for idletime jobs without an account; preferred over account_hint.
    std::optional<std::string> default_account;
    // Slurm's Default=YES partition (slurmctld's default_part_name), filled by the glue only for
    // jobs without idletime options and without -p.
    std::optional<std::string> default_partition;
    std::vector<std::string> tres;                         // tres_per_job/node/socket/task
    bool batch = false;                                    // job_desc->script set (sbatch)
};

// Copies what the decision needs out of job_desc (no allocation by Slurm, no I/O).
Submission view_of(const job_desc_msg_t *desc);

enum class Action { Untouched, Apply, Reject };
enum class ErrorKind { None, NoConfig, Mode, Quota, Account, GpuSpec, Partition, Modify, Internal };

struct Decision {
    Action action = Action::Untouched;
    ErrorKind error = ErrorKind::None;
    std::string message;         // Reject: one line for the user (sbatch prints it)
    std::string partitions;      // Apply: comma-separated, preference order
    std::string set_account;     // Apply: write into job_desc->account (it was NULL)
    bool requeue = false;        // Apply: set job_desc->requeue = 1
    bool notice = false;         // Apply: set warn_signal/warn_time/warn_flags
    uint16_t warn_signal = 0;    // signal number
    uint16_t warn_time = 0;      // seconds (the idle partitions' GraceTime)
    // Batch job: KILL_FULL_JOB|KILL_JOB_BATCH, i.e. the batch shell's whole process group (a
    // training process that is its child, and srun, which forwards it to its step's tasks);
    // otherwise 0 = every step. See doc/design/notice-and-release.md.
    uint16_t warn_flags = 0;
    std::string quota, summary;  // for the log line
    // Apply: the job's initial fault-tolerance record carrying the requested mode
    // ("idletime-ft:{...,"m":MODE}"), written into AdminComment when the submission has none, so
    // the views show the mode the user asked for after Slurm narrowed the partitions at start.
    std::string admin_comment;
    // Apply: NAME, value pairs the job must see that the submission did not carry (the resolved
    // quota when --quota was not given; the mode when only the quota was): job_submit_idletime
    // adds them to spank_job_env (prolog/epilog: SPANK_NAME) and, for batch jobs, to the job's
    // environment as SLURM_SPANK_NAME (what spank/idletime reads in the job).
    std::vector<std::pair<std::string, std::string>> job_env;
};

// cfg may be NULL (no valid config ever loaded): idletime jobs are rejected, others untouched.
// A job without idletime options that names -p is untouched. Without -p (README: `sbatch train.sh`,
// guaranteed only): an account with a quota is routed exactly as --idle-resources=none; an account
// without one is left to the site's own Default=YES partition if there is one (not an idletime
// partition), else rejected with one line naming the accounts that have quotas.
Decision decide(const idletime_config_t *cfg, const Submission &sub);

// `scontrol update job partition=...` by a non-admin. job_modify sees only the new values
// (job_record_t is opaque with public headers), so the job's mode and quota are unknown here:
// a new partition list naming any idletime partition is refused for non-admins (partitions of
// those are chosen at submission from --idle-resources/--quota), others are left to Slurm.
// cfg NULL or partition NULL/empty: Untouched.
Decision decide_modify(const idletime_config_t *cfg, const char *partition, bool admin);

// The checkpoint claim "idletime:ckpt=<unix time>" in a Comment a user sets (preempt/idletime
// ranks victims by it; doc/design/scheduling-plugins.md). slurmctld records no time of a Comment
// update, so the claim is bound to the moment it is written: at submission no claim can be true
// (the job has not run) and the token is removed; in an update a time more than
// kCkptClaimSlack seconds before or after now is replaced by now (libidletime-ckpt publishes
// within 5 s of each commit). Returns the new Comment, or nullopt when it stays as it is.
inline constexpr int64_t kCkptClaimSlack = 60;
std::optional<std::string> sanitize_ckpt_claim(const char *comment, int64_t now, bool at_submit);

// GPU types named in TRES strings like "gres:gpu:a100:2" (deduplicated, in order of appearance).
std::vector<std::string> gpu_types(const std::vector<std::string> &tres);

// True when the glue must fill Submission::default_account / default_partition for this job.
bool needs_account(const Submission &sub);
bool is_plain_unrouted(const Submission &sub);

// Slurm errno for a rejection.
int slurm_rc(ErrorKind kind);

}  // namespace idletime::jobsubmit
