// See poll_share.hpp.
#include "hook/poll_share.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace idletime::hook {
namespace {

struct Count {
    int n = 0;
    int64_t changed = 0;
};

// The count in fd; 0 when empty, malformed or stale (a bad file never slows a hook down more).
Count read_count(int fd, int64_t now) {
    char buf[64] = "";
    const ssize_t len = pread(fd, buf, sizeof(buf) - 1, 0);
    Count c;
    if (len <= 0) return c;
    buf[len] = 0;
    long long n = 0, t = 0;
    if (std::sscanf(buf, "%lld %lld", &n, &t) != 2 || n < 0 || n > 1000000 || t < 0) return c;
    if (now - t > kPollShareStaleS || t > now + kPollShareStaleS) return c;  // left by killed hooks
    c.n = int(n);
    c.changed = t;
    return c;
}

void lock(int fd, int how) {
    while (flock(fd, how) != 0 && errno == EINTR) {}
}

}  // namespace

int64_t shared_poll_ms(int64_t base_ms, int n) {
    if (n < 1) n = 1;
    return base_ms * ((n + kPollShare - 1) / kPollShare);
}

PollerSlot::PollerSlot(const std::string &path, std::string &err, NowFn now)
    : now_(now ? std::move(now) : NowFn([] { return int64_t(time(nullptr)); })) {
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
    if (!add(+1)) {
        err = path + ": cannot write: " + strerror(errno);
        close(fd_);
        fd_ = -1;
    }
}

PollerSlot::~PollerSlot() {
    if (fd_ < 0) return;
    add(-1);
    close(fd_);
}

bool PollerSlot::add(int delta) const {
    lock(fd_, LOCK_EX);
    const int64_t now = now_();
    Count c = read_count(fd_, now);
    c.n = c.n + delta < 0 ? 0 : c.n + delta;
    char buf[64];
    const int len = std::snprintf(buf, sizeof buf, "%d %lld\n", c.n, static_cast<long long>(now));
    const bool ok = ftruncate(fd_, 0) == 0 && pwrite(fd_, buf, size_t(len), 0) == len;
    lock(fd_, LOCK_UN);
    return ok;
}

int PollerSlot::pollers() const {
    if (fd_ < 0) return 1;
    lock(fd_, LOCK_SH);
    const Count c = read_count(fd_, now_());
    lock(fd_, LOCK_UN);
    return c.n < 1 ? 1 : c.n;
}

}  // namespace idletime::hook
