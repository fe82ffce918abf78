#include "ckpt/writer.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <set>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace idletime::ckpt {
namespace {

constexpr time_t kPreLockAge = 3600;  // a ".lk.*" older than this was abandoned mid-create

std::string host_name()
{
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0)
        return "unknown";
    std::string h;
    for (const char *p = buf; *p && h.size() < 64; p++)
        h += (std::isalnum(static_cast<unsigned char>(*p)) || *p == '-' || *p == '.') ? *p : '_';
    return h.empty() ? "unknown" : h;
}

// Field 22 of /proc/<pid>/stat (start time in clock ticks since boot), "" if unreadable.
std::string start_ticks(const std::string &pid)
{
    Fd fd(::open(("/proc/" + pid + "/stat").c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd)
        return "";
    std::string s;
    try {
        s = read_small(fd.get(), 4096, "stat");
    } catch (const Error &) {
        return "";
    }
    size_t p = s.rfind(')');
    if (p == std::string::npos)
        return "";
    std::istringstream in(s.substr(p + 1));
    std::string tok;
    for (int field = 3; field <= 22 && (in >> tok); field++)
        if (field == 22)
            return tok;
    return "";
}

// 0: locked; else the errno (EAGAIN/EACCES: held elsewhere; others: no lock support).
int try_lock(int fd)
{
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    return ::fcntl(fd, F_OFD_SETLK, &fl) == 0 ? 0 : errno;
}

bool held_elsewhere(int err) { return err == EAGAIN || err == EACCES; }

// Whether another open file description holds a lock on fd, without taking one: a cleaner that
// took a writer's pre-lock even for a moment made that writer fail ("held by another process").
bool locked_elsewhere(int fd)
{
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    return ::fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
}

// Liveness from the name alone (file systems without byte-range locks).
Owner by_process(const std::string &temp, std::string *why)
{
    size_t a = temp.find('@');
    if (a == std::string::npos) {
        *why = "no writer tag, no usable lock";
        return Owner::Unknown;
    }
    std::string rest = temp.substr(a + 1);
    std::string part[3];
    for (auto &f : part) {
        size_t b = rest.find('@');
        f = rest.substr(0, b);
        rest = b == std::string::npos ? "" : rest.substr(b + 1);
    }
    if (part[0] != host_name()) {
        *why = "written from host " + part[0] + " and locks are unsupported here";
        return Owner::Unknown;
    }
    if (!part[1].empty() && start_ticks(part[1]) == part[2] && !part[2].empty()) {
        *why = "its writer (pid " + part[1] + ") is running";
        return Owner::Live;
    }
    *why = "its writer (pid " + part[1] + " on this host) has exited";
    return Owner::Gone;
}

}  // namespace

std::string writer_tag()
{
    static std::atomic<unsigned long> seq{0};
    std::string pid = std::to_string(::getpid());
    return "@" + host_name() + "@" + pid + "@" + start_ticks(pid) + "@" +
           std::to_string(seq.fetch_add(1));
}

WriterLock::WriterLock(int dirfd, const std::string &dir, const std::string &temp)
    : dirfd_(dirfd), name_(temp + ".lock")
{
    const std::string pre = ".lk" + temp;
    fd_ = Fd(::openat(dirfd, pre.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                      0600));
    if (!fd_)
        throw_errno("create writer lock " + dir + "/" + pre);
    int err = try_lock(fd_.get());
    if (err && held_elsewhere(err)) {
        ::unlinkat(dirfd, pre.c_str(), 0);
        throw Error(-EBUSY, "writer lock " + dir + "/" + pre + " is held by another process");
    }
    locked_ = err == 0;
    if (::renameat(dirfd, pre.c_str(), dirfd, name_.c_str()) != 0) {
        int e = errno;
        ::unlinkat(dirfd, pre.c_str(), 0);
        errno = e;
        throw_errno("rename writer lock to " + dir + "/" + name_);
    }
}

WriterLock::~WriterLock() { release(); }

void WriterLock::release() noexcept
{
    if (!fd_)
        return;
    ::unlinkat(dirfd_, name_.c_str(), 0);  // while still locked: no one can judge it gone
    fd_ = Fd();
}

Owner temp_owner(int dirfd, const std::string &temp, Fd *held, std::string *why)
{
    Fd fd(::openat(dirfd, (temp + ".lock").c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) {
        if (errno == ENOENT) {
            *why = "it has no writer lock (its writer ended)";
            return Owner::Gone;
        }
        *why = std::string("cannot open its writer lock: ") + std::strerror(errno);
        return Owner::Unknown;
    }
    int err = try_lock(fd.get());
    if (err == 0) {
        *held = std::move(fd);
        *why = "its writer's lock is free (writer ended)";
        return Owner::Gone;
    }
    if (held_elsewhere(err)) {
        *why = "its writer holds the lock";
        return Owner::Live;
    }
    return by_process(temp, why);
}

namespace {

// An abandoned ".lk.*" (writer died between create and rename): old and not locked. Only asks
// whether it is locked: the writer locks it right after creating it.
void clean_pre_lock(int dirfd, const std::string &dir, const std::string &n,
                    const std::function<void(const std::string &)> &log)
{
    struct stat st;
    if (::fstatat(dirfd, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
        return;
    Fd fd(::openat(dirfd, n.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC));
    if (!fd || locked_elsewhere(fd.get()))
        return;
    // Unlocked: its writer is between create and lock, or gone. Gone if it ran on this host
    // and has exited, or (another host) after an hour.
    std::string why;
    if (by_process(n, &why) != Owner::Gone && st.st_mtime > ::time(nullptr) - kPreLockAge)
        return;
    if (::unlinkat(dirfd, n.c_str(), 0) == 0)
        log("removed abandoned writer lock " + dir + "/" + n);
}

}  // namespace

void clean_temporaries(int dirfd, const std::string &dir, const std::vector<std::string> &names,
                       const std::function<void(const std::string &)> &log)
{
    std::set<std::string> temps;
    for (const auto &n : names) {
        if (n.rfind(".lk.tmp-", 0) == 0) {
            clean_pre_lock(dirfd, dir, n, log);
        } else if (n.rfind(".tmp-del-", 0) == 0) {
            // Pruned copies: never a checkpoint again; whoever removes them first wins.
            try {
                remove_tree(dirfd, n);
                log("removed stale pruned checkpoint " + dir + "/" + n);
            } catch (const Error &e) {
                log(std::string("cannot remove stale ") + n + ": " + e.what());
            }
        } else if (n.rfind(".tmp-", 0) == 0) {
            const std::string sfx = ".lock";
            const size_t k = n.size() - std::min(n.size(), sfx.size());
            bool lk = n.size() > sfx.size() && n.compare(k, sfx.size(), sfx) == 0;
            temps.insert(lk ? n.substr(0, k) : n);
        }
    }
    for (const auto &t : temps) {
        Fd held;
        std::string why;
        Owner o = temp_owner(dirfd, t, &held, &why);
        if (o == Owner::Unknown)
            log("kept partial checkpoint " + dir + "/" + t + ": " + why);
        if (o != Owner::Gone)
            continue;  // a live writer's save: not ours to touch
        struct stat st;
        const bool lone = ::fstatat(dirfd, t.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT;
        try {
            remove_tree(dirfd, t);
            if (::unlinkat(dirfd, (t + ".lock").c_str(), 0) != 0 && errno != ENOENT)
                throw_errno("remove " + t + ".lock");
            // A lock without its temporary: the writer died before creating it, or after
            // removing it. Said as such: no partial checkpoint was there.
            log(lone ? "removed lone writer lock " + dir + "/" + t + ".lock: " + why
                     : "removed stale partial checkpoint " + dir + "/" + t + ": " + why);
        } catch (const Error &e) {
            log(std::string("cannot remove stale ") + t + ": " + e.what());
        }
    }
}

}  // namespace idletime::ckpt
