// Signal names allowed for the preemption notice (SIGUSR1 conflicts with NCCL's handler on
// some stacks, so the site chooses).
#pragma once
#include <string>

namespace idletime {

// "USR1", "SIGUSR1" or "10" -> 10; 0 when the name is not an allowed notice signal.
int signal_number(const std::string &name);
// 10 -> "USR1"; "" when not allowed.
std::string signal_name(int signo);
// "USR1, USR2, TERM, ..." for error messages.
std::string signal_names();

}  // namespace idletime
