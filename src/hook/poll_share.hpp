// Spreads one poll rate among the idletime-ft-hook processes that poll slurmctld at the same time
// (security.md R1). Every job that ends for good gets a hook that polls its job (one RPC each)
// until the job leaves COMPLETING, 4 times a second at first: a mass end (scancel of a 1,000-task
// array, 2,048 jobs torn down at once in bench/reclaim/scale.sh) ran hundreds of such loops at
// once, and slurmctld answered ~50 job loads a second with a mean of 150-190 ms each (sdiag,
// 2026-12-07). A hook registered here waits base_ms * ceil(n / kPollShare) between its polls (at
// most kMaxSharedPauseMs), n being the hooks registered now: up to kPollShare hooks poll as
// before, more share the rate. A hook's first poll is its own (it registers only after it).
//
// The hooks registered now are listed in one small file next to the wake spool (one PID a line),
// read and written under flock (waited for at most 2 s: a stopped hook holding it costs the others
// their sharing, not their progress). Each registration drops the PIDs of processes that no longer
// exist or belong to another user (all hooks run as SlurmUser), so a hook killed before it
// unregistered (SIGKILL) is not counted for long. The file must be a regular file with one link,
// owned by this user (O_NOFOLLOW): otherwise the hook polls at its own rate. No call throws.
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

// However many hooks wait, one hook polls at least this often (and once more at its deadline),
// so a user's mass end delays another job's scheduling pass by seconds, not minutes.
constexpr int64_t kMaxSharedPauseMs = 5000;

// A hook also waits at least kAnswerPace times as long as slurmctld took to answer its last poll,
// so one hook holds slurmctld's job lock at most a fifth of its time. That lock prefers readers
// (glibc's default rwlock): during a reclaim the victims' hooks' job loads keep it held for reading
// while the writes that end the victims' runs wait. Measured with bench/reclaim/scale.sh, N=64 with
// 2,048 running (2026-12-07): ~700 job loads per round answered in 40-105 ms on average, and each
// slurmstepd's REQUEST_COMPLETE_BATCH_SCRIPT in 410-644 ms. While slurmctld answers in under 62 ms
// this changes nothing.
constexpr int64_t kAnswerPace = 4;

// The pause after a poll that slurmctld answered in answer_ms: at least pause_ms, at least
// kAnswerPace * answer_ms, at most kMaxSharedPauseMs (never below pause_ms).
int64_t paced_pause_ms(int64_t pause_ms, int64_t answer_ms);

// How long a hook still waits before its next poll (0: poll now): the shared pause (base 250 ms
// for the first 5 s of its wait, then 1 s) paced by answer_ms (paced_pause_ms), capped at
// kMaxSharedPauseMs, counted from its last poll, never past its deadline. Re-asked with a fresh
// n at least every second, the pause shrinks as other hooks leave.
int64_t wait_before_poll_ms(int64_t since_start_ms, int64_t since_poll_ms, int64_t left_ms, int n,
                            int64_t answer_ms = 0);

// Registers this process for its lifetime (its PID added now, removed at destruction).
class PollerSlot {
public:
    using AliveFn = std::function<bool(long pid)>;  // nullptr: kill(pid, 0) succeeds
    PollerSlot(const std::string &path, std::string &err, AliveFn alive = nullptr) noexcept;
    ~PollerSlot();
    PollerSlot(const PollerSlot &) = delete;
    PollerSlot &operator=(const PollerSlot &) = delete;
    // Hooks registered now, this one included (1 when the file is unusable).
    int pollers() const noexcept;

private:
    bool rewrite(bool with_me) const noexcept;
    int fd_ = -1;
    long pid_ = 0;
    AliveFn alive_;
};

}  // namespace idletime::hook
