// Spreads one poll rate among the idletime-ft-hook processes that poll slurmctld at the same time
// (security.md R1). Every job that ends for good gets a hook that polls its job (one RPC each)
// until the job leaves COMPLETING, 4 times a second at first: a mass end (scancel of a 1,000-task
// array, 2,048 jobs torn down at once in bench/reclaim/scale.sh) ran hundreds of such loops at
// once, and slurmctld answered ~50 job loads a second with a mean of 150-190 ms each (sdiag,
// 2026-12-07). A hook registered here waits base_ms * ceil(n / kPollShare) between its polls, n
// being the hooks registered now: up to kPollShare hooks poll as before, more share the rate.
//
// The count lives in one small file next to the wake spool ("<n> <epoch s of the last change>\n"),
// read and written under flock. A hook killed before it unregisters leaves its count behind; a
// count that has not changed for kPollShareStaleS is taken as 0. The file must be a regular file
// owned by this user (O_NOFOLLOW): otherwise the hook polls at its own rate (n = 1).
#pragma once
#include <cstdint>
#include <functional>
#include <string>

namespace idletime::hook {

constexpr int kPollShare = 8;
constexpr int64_t kPollShareStaleS = 600;

// The pause between two polls of one hook when n hooks (n >= 1) share the rate.
int64_t shared_poll_ms(int64_t base_ms, int n);

// Registers this process for its lifetime (n + 1 now, n - 1 at destruction).
class PollerSlot {
public:
    using NowFn = std::function<int64_t()>;  // epoch seconds; nullptr: time()
    PollerSlot(const std::string &path, std::string &err, NowFn now = nullptr);
    ~PollerSlot();
    PollerSlot(const PollerSlot &) = delete;
    PollerSlot &operator=(const PollerSlot &) = delete;
    // Hooks registered now, this one included (1 when the file is unusable).
    int pollers() const;

private:
    bool add(int delta) const;
    int fd_ = -1;
    NowFn now_;
};

}  // namespace idletime::hook
