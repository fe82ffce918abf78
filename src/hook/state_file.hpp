// The small files idletime-ft-hook processes share next to the wake spool (ft-hook-wake.pass,
// .started, .pollers: security.md R1). Every hook runs as SlurmUser; a file is used only when it
// is a regular file with one link that this user owns (created 0600 when missing, never through
// a symlink), and its flock is waited for a bounded time: a hook stopped while holding it costs
// the others their sharing, never their progress. No call throws.
#pragma once
#include <string>

namespace idletime::hook {

// The file opened O_RDWR (created 0600 when missing); -1 with err naming the path and what is
// wrong (symlink, not a regular file, hard link, owner) otherwise.
int open_state_file(const std::string &path, std::string &err) noexcept;

// How long a hook waits for another hook's lock on one of these files.
constexpr int kStateLockMs = 2000;

// flock(fd, how) (LOCK_SH or LOCK_EX), waited for at most max_ms; false when not taken.
bool lock_state_file(int fd, int how, int max_ms) noexcept;

}  // namespace idletime::hook
