// See poll_share.hpp.
#include "hook/poll_share.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

namespace idletime::hook {
namespace {

constexpr off_t kMaxFileBytes = 2 << 20;

// The PIDs listed in fd, in order; lines that are no PID are skipped (a bad file slows no one).
std::vector<long> read_pids(int fd) {
    std::vector<long> pids;
    struct stat st {};
    if (fstat(fd, &st) != 0 || st.st_size <= 0) return pids;
    std::string text(size_t(std::min<off_t>(st.st_size, kMaxFileBytes)), '\0');
    const ssize_t got = pread(fd, text.data(), text.size(), 0);
    if (got <= 0) return pids;
    text.resize(size_t(got));
    size_t at = 0;
    while (at < text.size() && pids.size() < kPollShareMaxPids) {
        size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        const std::string line = text.substr(at, end - at);
        at = end + 1;
        char *rest = nullptr;
        errno = 0;
        const long v = std::strtol(line.c_str(), &rest, 10);
        if (!errno && rest != line.c_str() && *rest == '\0' && v > 0 && v <= INT_MAX) pids.push_back(v);
    }
    return pids;
}

bool write_pids(int fd, const std::vector<long> &pids) {
    std::string text;
    for (long p : pids) text += std::to_string(p) + "\n";
    return ftruncate(fd, 0) == 0 && pwrite(fd, text.data(), text.size(), 0) == ssize_t(text.size());
}

void lock(int fd, int how) {
    while (flock(fd, how) != 0 && errno == EINTR) {}
}

bool process_exists(long pid) { return kill(pid_t(pid), 0) == 0 || errno != ESRCH; }

}  // namespace

int64_t shared_poll_ms(int64_t base_ms, int n) {
    if (n < 1) n = 1;
    return base_ms * ((n + kPollShare - 1) / kPollShare);
}

PollerSlot::PollerSlot(const std::string &path, std::string &err, AliveFn alive)
    : pid_(long(getpid())), alive_(alive ? std::move(alive) : AliveFn(process_exists)) {
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        err = path + ": " + strerror(errno);
        return;
    }
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
        err = path + ": not a regular file owned by this user";
        close(fd);
        return;
    }
    fd_ = fd;
    if (!rewrite(true)) {
        err = path + ": cannot write: " + strerror(errno);
        close(fd_);
        fd_ = -1;
    }
}

PollerSlot::~PollerSlot() {
    if (fd_ < 0) return;
    rewrite(false);
    close(fd_);
}

// Registering (with_me): drops the PIDs of processes gone, adds this one. Leaving: removes one
// line of this PID (a process may hold several slots).
bool PollerSlot::rewrite(bool with_me) const {
    lock(fd_, LOCK_EX);
    std::vector<long> pids = read_pids(fd_);
    if (with_me) {
        std::map<long, bool> seen;
        pids.erase(std::remove_if(pids.begin(), pids.end(),
                                  [&](long p) {
                                      auto it = seen.find(p);
                                      if (it == seen.end()) it = seen.emplace(p, alive_(p)).first;
                                      return !it->second;
                                  }),
                   pids.end());
        pids.push_back(pid_);
    } else {
        auto it = std::find(pids.begin(), pids.end(), pid_);
        if (it != pids.end()) pids.erase(it);
    }
    const bool ok = write_pids(fd_, pids);
    lock(fd_, LOCK_UN);
    return ok;
}

int PollerSlot::pollers() const {
    if (fd_ < 0) return 1;
    lock(fd_, LOCK_SH);
    const size_t n = read_pids(fd_).size();
    lock(fd_, LOCK_UN);
    return n < 1 ? 1 : int(n);
}

}  // namespace idletime::hook
