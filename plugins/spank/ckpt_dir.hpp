// Per-job checkpoint directory <root>/<user>/<jobid>-<key>: created by root in slurmstepd, owned by
// the job's user, mode 0700. Everything is done through directory descriptors, never by path:
//  - checkpoint_root is walked from "/" with openat(O_NOFOLLOW|O_DIRECTORY); every existing
//    component must be a real directory owned by root and writable by nobody else (a sticky
//    world-writable directory such as /tmp is refused too: a user could pre-create the next
//    component there). Missing components are created root-owned 0755.
//  - <root>/<user> is root's too (created 0755): only root ever writes next to a job directory
//    (one of the user's own, not group/other-writable, made by earlier versions, is accepted).
//  - the job directory is created with mkdirat under a temporary name (.idletime-new-<name>-<nonce>);
//    that inode is opened with openat(O_NOFOLLOW) on the parent's descriptor and checked
//    (directory, root-owned, mode, same filesystem) before fchown to uid:gid and fchmod 0700
//    through that descriptor, then renamed into place with RENAME_NOREPLACE: tasks of one step
//    racing on several nodes see no directory or the finished one, never root's half-made one. An existing job
//    directory (a requeued job) is used only when it is a real directory owned by the job's uid on
//    the root's filesystem; its mode is then reset to 0700 through its descriptor.
// <key> (job_submit/idletime's per-submission nonce) keeps a reused job id from resuming another
// job's checkpoint.
#pragma once
#include <sys/types.h>

#include <string>

namespace idletime::spank {

// Path only (no I/O): root + "/" + user + "/" + dir_name.
std::string ckpt_dir_path(const std::string &root, const std::string &user, const std::string &dir_name);

// Name of a job's directory: "<jobid>-<key>". "" when key is not 8-32 lowercase hex digits.
std::string ckpt_dir_name(unsigned long jobid, const std::string &key);

// True for a name ckpt_dir_name can return; *jobid gets its job id.
bool ckpt_dir_name_parse(const std::string &name, unsigned long *jobid);

enum class CkptError { None, Root, Dir };

struct CkptResult {
    CkptError error = CkptError::None;
    std::string message;  // one line: what was refused, the path, and the fix
};

// Opens checkpoint_root as described above, creating missing components. Returns the descriptor
// (>= 0) or -1 with err set (error Root). Used by the job side and the retention hook.
int ckpt_root_open(const std::string &root, bool create, CkptResult &err);

// Creates <root>/<user>/<dir_name> for uid:gid (see above).
CkptResult ckpt_dir_ensure(const std::string &root, const std::string &user, const std::string &dir_name,
                           uid_t uid, gid_t gid);

}  // namespace idletime::spank
