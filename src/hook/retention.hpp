// Checkpoint retention, run by root in the EpilogSlurmctld hook (idletime-ft-hook) at each job end:
//  1. the ended job's directories (<root>/<its user>/<jobid>-*) get their mtime set to now, so the
//     retention period counts from the job's end (or its last checkpoint, whichever is later);
//  2. at most once a minute (a stamp file in the root), directories whose job slurmctld no longer
//     has pending/running and that have not changed for idle.checkpoint_retention seconds are
//     removed: bounded work per call (entries read, directories and files removed).
// Everything goes through descriptors: the root is opened as the SPANK plugin does (every component
// root-owned, not group/other-writable, no symlink), then openat(O_NOFOLLOW|O_DIRECTORY) and
// unlinkat; below a job directory (owned by the job's user) a directory is entered only when that
// user owns it and it is on the root's filesystem, so a symlink or a foreign file planted by a user
// is never followed and nothing outside the root, or not the user's, is removed.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <set>
#include <string>

namespace idletime::retention {

using Log = std::function<void(const std::string &)>;
// Fills the ids of jobs slurmctld has not finished (pending, running, suspended, completing);
// false when slurmctld cannot say (then nothing is removed).
using ActiveJobs = std::function<bool(std::set<uint32_t> &)>;

struct Limits {
    unsigned max_entries = 20000;   // directory entries read per call
    unsigned max_dirs = 64;         // job directories removed per call
    unsigned max_unlinks = 200000;  // files and directories unlinked per call
    unsigned min_interval_s = 60;   // between two sweeps (also capped at retention/2)
};

struct Stats {
    unsigned touched = 0, removed = 0, kept_active = 0, kept_recent = 0, left = 0;
    bool swept = false;
};

// The ended job's directories get mtime = now (uid: the job's owner as slurmctld reports it), then
// a sweep when due. Never throws; every refusal is one line through log.
Stats on_job_end(const std::string &root, uint32_t retention_s, uint32_t job_id, uid_t uid, const Log &log,
                 const ActiveJobs &active, const Limits &limits = Limits{}) noexcept;

// The hook's entry point: reads the config's idle.checkpoint_root/checkpoint_retention and asks
// slurmctld for its unfinished jobs (one RPC, only when a directory is old enough).
void run_for_job(const std::string &config_path, uint32_t job_id, uid_t uid, const Log &log) noexcept;

}  // namespace idletime::retention
