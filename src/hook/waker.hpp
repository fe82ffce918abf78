// One shared waker for the hook's backoff wake-ups (issue 11 item 7): instead of one sleeping
// process per requeued job, each hook leaves "<job id>" -> "<begin time>" in a spool directory
// and at most one process (whoever holds DIR/.lock) serves all of them, then exits when none is
// left. See doc/design/fault-tolerance.md "Restart latency".
#pragma once
#include <cstdint>
#include <ctime>
#include <functional>
#include <string>

namespace idletime::hook {

// Records that job `job` should be woken at `begin` (replaces an earlier entry of that job).
// Creates `dir` (mode 0700) if needed. false with err on failure.
bool wake_enqueue(const std::string &dir, uint32_t job, time_t begin, std::string &err);

// Becomes the waker unless another process is (non-blocking lock), calls wake(job, begin) for
// each entry once its time has come, and returns when the directory is empty. Returns false
// when another process already serves the directory.
using WakeFn = std::function<void(uint32_t job, time_t begin)>;
using SleepFn = std::function<void(int seconds)>;
bool wake_serve(const std::string &dir, const WakeFn &wake, const SleepFn &sleep_s = nullptr);

// Number of pending entries (for tests and logs).
size_t wake_pending(const std::string &dir);

}  // namespace idletime::hook
