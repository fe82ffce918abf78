// Spreads one poll rate among the idletime-ft-hook processes that poll slurmctld at the same time
// (security.md R1). Every job that ends for good gets a hook that polls its job (one RPC each)
// until the job leaves COMPLETING, 4 times a second at first: a mass end (scancel of a 1,000-task
// array, 2,048 jobs torn down at once in bench/reclaim/scale.sh) ran hundreds of such loops at
// once, and slurmctld answered ~50 job loads a second with a mean of 150-190 ms each (sdiag,
// 2026-12-07). A hook registered here waits base_ms * ceil(n / kPollShare) between its polls, n
// being the hooks registered now: up to kPollShare hooks poll as before, more share the rate.
//
// The hooks registered now are listed in one small file next to the wake spool (one PID a line),
// read and written under flock. Each registration drops the PIDs of processes that no longer
// exist, so a hook killed before it unregistered (SIGKILL) is not counted for long. The file must
// be a regular file owned by this user (O_NOFOLLOW): otherwise the hook polls at its own rate.
#pragma once
#include <cstdint>
#include <cstddef>
#include <functional>
#include <string>

namespace idletime::hook {

constexpr int kPollShare = 8;
constexpr size_t kPollShareMaxPids = 100000;  // more lines: the rest is ignored

// The pause between two polls of one hook when n hooks (n >= 1) share the rate.
int64_t shared_poll_ms(int64_t base_ms, int n);

// Registers this process for its lifetime (its PID added now, removed at destruction).
class PollerSlot {
public:
    using AliveFn = std::function<bool(long pid)>;  // nullptr: kill(pid, 0) does not say ESRCH
    PollerSlot(const std::string &path, std::string &err, AliveFn alive = nullptr);
    ~PollerSlot();
    PollerSlot(const PollerSlot &) = delete;
    PollerSlot &operator=(const PollerSlot &) = delete;
    // Hooks registered now, this one included (1 when the file is unusable).
    int pollers() const;

private:
    bool rewrite(bool with_me) const;
    int fd_ = -1;
    long pid_ = 0;
    AliveFn alive_;
};

}  // namespace idletime::hook
