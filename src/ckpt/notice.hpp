// Process-wide preemption notice: async-signal-safe handlers that set a flag and the time.
#pragma once

#include <cstdint>
#include <string>

namespace idletime::ckpt {

// "USR1", "SIGUSR1", "usr1" or a number; -1 if unknown.
int parse_signal(const std::string &s);
// Installs the handler for signo (0 = env IDLETIME_CKPT_SIGNAL or SIGUSR1) and SIGTERM; reads
// IDLETIME_GRACE_TIME. Returns the signal used; throws Error(-EINVAL) on bad input.
int install_notice(int signo);
bool notice_received();
int64_t notice_deadline();  // 0 before any notice
int notice_signal();        // 0 if not installed
// Read end of the notice socket pair: readable once the notice arrived (never drained by the
// library); -1 if not installed in this process (a forked child must install again).
int notice_fd();

}  // namespace idletime::ckpt
