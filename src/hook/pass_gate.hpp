// Coalesces the scheduling passes that idletime-ft-hook queues after job ends (security.md R1):
// at most one pass per interval for the whole cluster, and still one pass after every job end.
// A stamp file holds the wall-clock time (ms) at which the last pass was started; it is read and
// written under flock, so concurrent hooks (one per ending job) agree on who queues the pass.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

namespace idletime::hook {

using NowMsFn = std::function<int64_t()>;           // wall clock, ms since the epoch
using SleepMsFn = std::function<void(int64_t ms)>;  // blocks for ms

struct PassGate {
    std::string stamp_path;    // created mode 0600 if missing; a symlink there is refused
    int64_t interval_ms = 1000;
    NowMsFn now_ms;            // nullptr: the system clock
    SleepMsFn sleep_ms;        // nullptr: nanosleep
};

// Called once the ending job has left COMPLETING at done_ms. Returns true when this caller must
// queue the pass now (it reserved the next slot, at most interval_ms after the last pass, in the
// stamp and released the lock, then slept until the slot), false when a pass started or reserved
// at or after done_ms already covers this job end. The lock is held only to read and write the
// stamp, so a mass end of jobs never makes hooks wait out kStateLockMs (and then queue passes of
// their own). On a stamp file error it returns true (queue anyway)
// with err set.
bool pass_gate_enter(const PassGate &g, int64_t done_ms, std::string &err);

}  // namespace idletime::hook
