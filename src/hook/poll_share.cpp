// See poll_share.hpp.
#include "hook/poll_share.hpp"
#include "hook/state_file.hpp"

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

// Every hook runs as SlurmUser: a PID that kill() may not signal is not one of them.
bool process_exists(long pid) { return kill(pid_t(pid), 0) == 0; }

}  // namespace

int64_t shared_poll_ms(int64_t base_ms, int n) {
    if (n < 1) n = 1;
    return base_ms * ((n - 1) / kPollShare + 1);
}

int64_t paced_pause_ms(int64_t pause_ms, int64_t answer_ms) {
    const int64_t paced = answer_ms > 0 ? std::min(answer_ms, kMaxSharedPauseMs) * kAnswerPace : 0;
    return std::max(pause_ms, std::min(paced, kMaxSharedPauseMs));
}

int64_t wait_before_poll_ms(int64_t since_start_ms, int64_t since_poll_ms, int64_t left_ms, int n,
                            int64_t answer_ms) {
    const int64_t shared = std::min(shared_poll_ms(since_start_ms < 5000 ? 250 : 1000, n), kMaxSharedPauseMs);
    const int64_t pause = paced_pause_ms(shared, answer_ms);
    return std::max<int64_t>(0, std::min(pause - since_poll_ms, left_ms));
}

PollerSlot::PollerSlot(const std::string &path, std::string &err, AliveFn alive) noexcept
    : pid_(long(getpid())) {
    try {
        alive_ = alive ? std::move(alive) : AliveFn(process_exists);
        fd_ = open_state_file(path, err);
        if (fd_ < 0) return;
        if (!rewrite(true)) {
            err = path + ": cannot register (locked by a stopped hook, or not writable)";
        } else {
            return;
        }
    } catch (...) {  // out of memory: no slot, this hook polls at its own rate
    }
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
}

PollerSlot::~PollerSlot() {
    if (fd_ < 0) return;
    rewrite(false);
    close(fd_);
}

// Registering (with_me): drops the PIDs of processes gone, adds this one. Leaving: removes one
// line of this PID (a process may hold several slots).
bool PollerSlot::rewrite(bool with_me) const noexcept {
    if (!lock_state_file(fd_, LOCK_EX, kStateLockMs)) return false;
    bool ok = false;
    try {
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
        ok = write_pids(fd_, pids);
    } catch (...) {
        ok = false;  // out of memory: the file keeps what it had
    }
    flock(fd_, LOCK_UN);
    return ok;
}

int PollerSlot::pollers() const noexcept {
    if (fd_ < 0 || !lock_state_file(fd_, LOCK_SH, kStateLockMs)) return 1;
    size_t n = 0;
    try {
        n = read_pids(fd_).size();
    } catch (...) {
        n = 1;
    }
    flock(fd_, LOCK_UN);
    return n < 1 ? 1 : int(n);
}

}  // namespace idletime::hook
