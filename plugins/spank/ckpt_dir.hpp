// Per-job checkpoint directory <root>/<user>/<jobid>: created by root in slurmstepd, owned by the
// job's user, mode 0700. A component that already exists owned by someone else is refused, so a
// directory planted by another user is never handed to the job (its pickles would run as the job).
#pragma once
#include <sys/types.h>

#include <string>

namespace idletime::spank {

// Path only (no I/O): root + "/" + user + "/" + jobid.
std::string ckpt_dir_path(const std::string &root, const std::string &user, const std::string &jobid);

// Creates missing components (root and its parents: 0755 owned by the caller; user and job dirs: 0700 owned by
// uid:gid), never follows symlinks. Returns "" on success, else one line saying what was refused.
std::string ckpt_dir_ensure(const std::string &root, const std::string &user, const std::string &jobid,
                            uid_t uid, gid_t gid);

}  // namespace idletime::spank
