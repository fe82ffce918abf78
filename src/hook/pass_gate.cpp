// See pass_gate.hpp.
#include "hook/pass_gate.hpp"
#include "hook/state_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace idletime::hook {
namespace {

int64_t system_ms() {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// The stamp in fd, 0 when empty or malformed (a malformed stamp never suppresses a pass).
int64_t read_stamp(int fd) {
    char buf[32] = "";
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
    if (n <= 0) return 0;
    buf[n] = 0;
    char *end = nullptr;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    return errno || end == buf || v < 0 ? 0 : int64_t(v);
}

bool write_stamp(int fd, int64_t ms) {
    const std::string s = std::to_string(ms) + "\n";
    return ftruncate(fd, 0) == 0 && pwrite(fd, s.data(), s.size(), 0) == ssize_t(s.size());
}

}  // namespace

bool pass_gate_enter(const PassGate &g, int64_t done_ms, std::string &err) {
    const NowMsFn now = g.now_ms ? g.now_ms : NowMsFn(system_ms);
    const int fd = open_state_file(g.stamp_path, err);
    if (fd < 0) return true;
    if (!lock_state_file(fd, LOCK_EX, kStateLockMs)) {
        err = g.stamp_path + ": still locked after " + std::to_string(kStateLockMs) + " ms";
        close(fd);
        return true;
    }
    // A stamp up to one interval ahead is a slot another hook reserved: its pass starts then,
    // after this job end. One further ahead is damage and never suppresses a pass.
    const int64_t t = now();
    const int64_t last = read_stamp(fd);
    if (last >= done_ms && last <= t + g.interval_ms) {
        close(fd);
        return false;  // a pass started (or is reserved) after this job end: it sees the freed resources
    }
    const int64_t wait = last + g.interval_ms - t;
    const int64_t slot = wait > 0 && wait <= g.interval_ms ? last + g.interval_ms : t;
    if (!write_stamp(fd, slot)) err = g.stamp_path + ": cannot write: " + strerror(errno);
    close(fd);  // releases the lock before the wait: later hooks see the slot and leave at once
    if (slot > t) {
        if (g.sleep_ms)
            g.sleep_ms(slot - t);
        else
            std::this_thread::sleep_for(std::chrono::milliseconds(slot - t));
    }
    return true;
}

}  // namespace idletime::hook
