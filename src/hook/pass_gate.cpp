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
    const int64_t last = read_stamp(fd);
    bool mine = true;
    if (last >= done_ms && last <= now()) {
        mine = false;  // a pass started after this job end: it sees the freed resources
    } else {
        const int64_t wait = last + g.interval_ms - now();
        if (wait > 0 && wait <= g.interval_ms) {
            if (g.sleep_ms)
                g.sleep_ms(wait);
            else
                std::this_thread::sleep_for(std::chrono::milliseconds(wait));
        }
        if (!write_stamp(fd, now())) err = g.stamp_path + ": cannot write: " + strerror(errno);
    }
    close(fd);  // releases the lock
    return mine;
}

}  // namespace idletime::hook
