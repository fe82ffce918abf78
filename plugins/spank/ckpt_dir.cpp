#include "plugins/spank/ckpt_dir.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace idletime::spank {
namespace {

class Fd {
public:
    explicit Fd(int fd = -1) : fd_(fd) {}
    Fd(const Fd &) = delete;
    Fd &operator=(const Fd &) = delete;
    ~Fd() {
        if (fd_ >= 0) close(fd_);
    }
    int get() const { return fd_; }
    void reset(int fd) {
        if (fd_ >= 0) close(fd_);
        fd_ = fd;
    }

private:
    int fd_;
};

std::string sys_err(const std::string &what, const std::string &path) {
    return what + " " + path + ": " + std::strerror(errno);
}

bool plain_component(const std::string &s) {
    return !s.empty() && s != "." && s != ".." && s.find('/') == std::string::npos;
}

// Opens (creating if missing) parent/name as a directory owned by uid:gid with the given mode.
std::string open_owned(int parent, const std::string &name, const std::string &path, uid_t uid, gid_t gid,
                       mode_t mode, Fd &out) {
    bool created = mkdirat(parent, name.c_str(), mode) == 0;
    if (!created && errno != EEXIST) return sys_err("cannot create", path);
    out.reset(openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (out.get() < 0) return sys_err("refusing (not a plain directory)", path);
    struct stat st;
    if (fstat(out.get(), &st) != 0) return sys_err("cannot stat", path);
    if (created) {
        if (fchown(out.get(), uid, gid) != 0 && st.st_uid != uid) return sys_err("cannot chown", path);
    } else if (st.st_uid != uid) {
        return "refusing " + path + ": it exists owned by uid " + std::to_string(st.st_uid) +
               ", not the job's uid " + std::to_string(uid);
    }
    if ((st.st_mode & 07777) != mode && fchmod(out.get(), mode) != 0) return sys_err("cannot chmod", path);
    return "";
}

}  // namespace

std::string ckpt_dir_path(const std::string &root, const std::string &user, const std::string &jobid) {
    return root + "/" + user + "/" + jobid;
}

std::string ckpt_dir_ensure(const std::string &root, const std::string &user, const std::string &jobid,
                            uid_t uid, gid_t gid) {
    if (root.empty() || root[0] != '/') return "checkpoint_root \"" + root + "\" is not an absolute path";
    if (!plain_component(user) || !plain_component(jobid))
        return "refusing checkpoint directory for user \"" + user + "\" job \"" + jobid + "\"";
    for (size_t slash = root.find('/', 1); slash != std::string::npos; slash = root.find('/', slash + 1))
        if (mkdir(root.substr(0, slash).c_str(), 0755) != 0 && errno != EEXIST)
            return sys_err("cannot create", root.substr(0, slash));
    if (mkdir(root.c_str(), 0755) != 0 && errno != EEXIST) return sys_err("cannot create", root);
    Fd rootfd(open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (rootfd.get() < 0) return sys_err("cannot open", root);
    struct stat st;
    if (fstat(rootfd.get(), &st) != 0) return sys_err("cannot stat", root);
    // Others could rename our directories away in a world-writable root without the sticky bit.
    if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
        return "refusing " + root + ": world-writable without the sticky bit";
    Fd userfd, jobfd;
    std::string err = open_owned(rootfd.get(), user, root + "/" + user, uid, gid, 0700, userfd);
    if (!err.empty()) return err;
    return open_owned(userfd.get(), jobid, ckpt_dir_path(root, user, jobid), uid, gid, 0700, jobfd);
}

}  // namespace idletime::spank
