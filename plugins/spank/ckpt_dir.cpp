#include "plugins/spank/ckpt_dir.hpp"

#include <fcntl.h>
#include <stdio.h>  // renameat2, RENAME_NOREPLACE
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace idletime::spank {
namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

class Fd {
public:
    explicit Fd(int fd = -1) : fd_(fd) {}
    Fd(const Fd &) = delete;
    Fd &operator=(const Fd &) = delete;
    ~Fd() { reset(-1); }
    int get() const { return fd_; }
    int release() {
        int fd = fd_;
        fd_ = -1;
        return fd;
    }
    void reset(int fd) {
        if (fd_ >= 0) close(fd_);
        fd_ = fd;
    }

private:
    int fd_;
};

std::string octal(mode_t m) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%04o", unsigned(m & 07777));
    return buf;
}

CkptResult fail(CkptError kind, std::string msg) { return CkptResult{kind, std::move(msg)}; }

const char *kRootFix = "fix: make every component of checkpoint_root a real directory owned by root, "
                       "mode 0755 (not a symlink, not below a user- or world-writable directory)";

CkptResult root_refused(const std::string &root, const std::string &path, const std::string &why) {
    return fail(CkptError::Root, "refusing checkpoint_root " + root + ": " + path + " " + why + "; " + kRootFix);
}

// The checks every component of the root passes: directory, root-owned, not group/other-writable.
std::string root_component_problem(const struct stat &st) {
    if (!S_ISDIR(st.st_mode)) return "is not a directory";
    if (st.st_uid != 0) return "is owned by uid " + std::to_string(st.st_uid) + ", not root";
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        return "is writable by group or others (mode " + octal(st.st_mode) + ")";
    return "";
}

// Opens parent/name as the next root component, creating it root-owned 0755 when missing.
int open_root_component(int parent, const std::string &name, bool create) {
    int fd = openat(parent, name.c_str(), kDirFlags);
    if (fd >= 0 || errno != ENOENT || !create) return fd;
    if (mkdirat(parent, name.c_str(), 0755) != 0 && errno != EEXIST) return -1;
    fd = openat(parent, name.c_str(), kDirFlags);
    struct stat st;
    // umask may have removed r-x for others; only our own fresh root-owned inode is changed.
    if (fd >= 0 && fstat(fd, &st) == 0 && st.st_uid == 0 && (st.st_mode & 07777) != 0755) fchmod(fd, 0755);
    return fd;
}

bool plain_component(const std::string &s) {
    return !s.empty() && s != "." && s != ".." && s.find('/') == std::string::npos;
}

std::string errno_text(const char *what, const std::string &path) {
    return std::string(what) + " " + path + ": " + std::strerror(errno);
}

// Owner/mode/filesystem check of a user or job directory opened through its parent.
CkptResult check_user_dir(int fd, const std::string &path, uid_t uid, gid_t gid, dev_t dev, bool fresh) {
    struct stat st;
    if (fstat(fd, &st) != 0) return fail(CkptError::Dir, errno_text("cannot stat", path));
    if (st.st_dev != dev) return fail(CkptError::Dir, "refusing " + path + ": it is on another filesystem");
    if (fresh) {
        // The inode mkdirat just made is root's with at most mode 0700: anything else was swapped in.
        // (setgid may come from the parent.)
        if (st.st_uid != 0 || (st.st_mode & (S_ISUID | S_ISVTX | 077)) != 0)
            return fail(CkptError::Dir, "refusing " + path + ": replaced while it was being created (owner uid " +
                                            std::to_string(st.st_uid) + ", mode " + octal(st.st_mode) + ")");
        if (fchown(fd, uid, gid) != 0) return fail(CkptError::Dir, errno_text("cannot chown", path));
    } else if (st.st_uid != uid) {
        return fail(CkptError::Dir, "refusing " + path + ": it exists owned by uid " + std::to_string(st.st_uid) +
                                        ", not the job's uid " + std::to_string(uid));
    }
    if ((st.st_mode & 07777) != 0700 && fchmod(fd, 0700) != 0)
        return fail(CkptError::Dir, errno_text("cannot chmod", path));
    return {};
}

// Makes parent/name a directory of uid:gid, mode 0700, in one step as others see it: it is made
// and chowned under a temporary name, then renamed into place without replacing anything. Tasks
// of one step on several nodes (shared checkpoint_root) or on one node race here; each sees either
// no directory or the finished one.
CkptResult create_owned(int parent, const std::string &name, const std::string &path, uid_t uid, gid_t gid,
                        dev_t dev) {
    unsigned long long nonce = 0;
    if (getrandom(&nonce, sizeof nonce, 0) != sizeof nonce) nonce = (unsigned long long)getpid() << 20;
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, "%016llx", nonce);
    const std::string tmp = ".idletime-new-" + name + "-" + suffix;
    if (mkdirat(parent, tmp.c_str(), 0700) != 0) return fail(CkptError::Dir, errno_text("cannot create", path));
    CkptResult r;
    {
        Fd fd(openat(parent, tmp.c_str(), kDirFlags));
        r = fd.get() < 0 ? fail(CkptError::Dir, errno_text("cannot open", path))
                         : check_user_dir(fd.get(), path, uid, gid, dev, true);
    }
    if (r.error == CkptError::None && renameat2(parent, tmp.c_str(), parent, name.c_str(), RENAME_NOREPLACE) == 0)
        return r;
    const int e = errno;
    unlinkat(parent, tmp.c_str(), AT_REMOVEDIR);
    if (r.error != CkptError::None || e == EEXIST) return r;  // EEXIST: another task made it first
    errno = e;
    return fail(CkptError::Dir, errno_text("cannot create", path));
}

// Opens (creating if missing) parent/name as a directory of uid:gid, mode 0700.
CkptResult open_owned(int parent, const std::string &name, const std::string &path, uid_t uid, gid_t gid, dev_t dev,
                      Fd &out) {
    out.reset(openat(parent, name.c_str(), kDirFlags));
    if (out.get() < 0 && errno == ENOENT) {
        CkptResult r = create_owned(parent, name, path, uid, gid, dev);
        if (r.error != CkptError::None) return r;
        out.reset(openat(parent, name.c_str(), kDirFlags));
    }
    if (out.get() < 0) {
        if (errno == ELOOP || errno == ENOTDIR)
            return fail(CkptError::Dir, "refusing " + path + ": it is a symlink or not a directory");
        return fail(CkptError::Dir, errno_text("cannot open", path));
    }
    return check_user_dir(out.get(), path, uid, gid, dev, false);
}

}  // namespace

std::string ckpt_dir_path(const std::string &root, const std::string &user, const std::string &dir_name) {
    return root + "/" + user + "/" + dir_name;
}

std::string ckpt_dir_name(unsigned long jobid, const std::string &key) {
    if (key.size() < 8 || key.size() > 32) return "";
    for (char c : key)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return "";
    return std::to_string(jobid) + "-" + key;
}

bool ckpt_dir_name_parse(const std::string &name, unsigned long *jobid) {
    size_t dash = name.find('-');
    if (dash == 0 || dash == std::string::npos || dash > 10) return false;
    unsigned long id = 0;
    for (size_t i = 0; i < dash; ++i) {
        if (name[i] < '0' || name[i] > '9') return false;
        id = id * 10 + unsigned(name[i] - '0');
    }
    if (id == 0 || id > 0xffffffffUL || ckpt_dir_name(id, name.substr(dash + 1)) != name) return false;
    if (jobid) *jobid = id;
    return true;
}

int ckpt_root_open(const std::string &root, bool create, CkptResult &err) {
    if (root.empty() || root[0] != '/') {
        err = fail(CkptError::Root, "checkpoint_root \"" + root + "\" is not an absolute path");
        return -1;
    }
    Fd cur(open("/", kDirFlags));
    if (cur.get() < 0) {
        err = root_refused(root, "/", std::string("cannot be opened (") + std::strerror(errno) + ")");
        return -1;
    }
    std::string path;
    for (size_t start = 1;; ) {
        struct stat st;
        if (fstat(cur.get(), &st) != 0) {
            err = root_refused(root, path.empty() ? "/" : path, std::string("cannot be opened (") + std::strerror(errno) + ")");
            return -1;
        }
        std::string problem = root_component_problem(st);
        if (!problem.empty()) {
            err = root_refused(root, path.empty() ? "/" : path, problem);
            return -1;
        }
        if (start >= root.size()) return cur.release();
        size_t slash = root.find('/', start);
        std::string name = root.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
        start = slash == std::string::npos ? root.size() : slash + 1;
        if (name.empty()) continue;  // "//" or a trailing "/"
        path += "/" + name;
        if (!plain_component(name)) {
            err = root_refused(root, path, "is not a plain name");
            return -1;
        }
        int next = open_root_component(cur.get(), name, create);
        if (next < 0) {
            err = errno == ELOOP || errno == ENOTDIR
                      ? root_refused(root, path, "is a symlink or not a directory")
                      : root_refused(root, path, std::string("cannot be opened or created (") + std::strerror(errno) + ")");
            return -1;
        }
        cur.reset(next);
    }
}

CkptResult ckpt_dir_ensure(const std::string &root, const std::string &user, const std::string &dir_name,
                           uid_t uid, gid_t gid) {
    if (!plain_component(user) || !plain_component(dir_name) || uid == 0)
        return fail(CkptError::Dir, "refusing checkpoint directory \"" + dir_name + "\" for user \"" + user + "\"");
    CkptResult r;
    Fd rootfd(ckpt_root_open(root, true, r));
    if (rootfd.get() < 0) return r;
    struct stat st;
    if (fstat(rootfd.get(), &st) != 0) return fail(CkptError::Root, errno_text("cannot stat", root));
    // <root>/<user> is root's too (0755): nobody but root can rename or plant anything next to a
    // job directory, so the job directory below cannot be swapped while it is being made.
    const std::string upath = root + "/" + user;
    Fd userfd(open_root_component(rootfd.get(), user, true));
    struct stat ust;
    if (userfd.get() < 0 && (errno == ELOOP || errno == ENOTDIR))
        return fail(CkptError::Dir, "refusing " + upath + ": it is a symlink or not a directory; fix: remove it");
    if (userfd.get() < 0) return fail(CkptError::Dir, errno_text("cannot create or open", upath));
    if (fstat(userfd.get(), &ust) != 0) return fail(CkptError::Dir, errno_text("cannot stat", upath));
    // Earlier versions made <root>/<user> the user's own 0700: still accepted when it is the job
    // uid's and not group/other-writable (the fresh-inode check below keeps a swap from working).
    const bool legacy = ust.st_uid == uid && S_ISDIR(ust.st_mode) && !(ust.st_mode & (S_IWGRP | S_IWOTH));
    std::string problem = legacy ? "" : root_component_problem(ust);
    if (!legacy && ust.st_uid == uid && S_ISDIR(ust.st_mode))
        problem = "is writable by group or others (mode " + octal(ust.st_mode) + ")";
    if (problem.empty() && ust.st_dev != st.st_dev) problem = "is on another filesystem";
    if (!problem.empty())
        return fail(CkptError::Dir, "refusing " + upath + ": it " + problem +
                                        "; fix: chown root:root " + upath + " && chmod 0755 " + upath);
    Fd jobfd;
    return open_owned(userfd.get(), dir_name, ckpt_dir_path(root, user, dir_name), uid, gid, st.st_dev, jobfd);
}

}  // namespace idletime::spank
