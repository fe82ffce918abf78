// Internal interface between the SPANK hook file and the per-context handlers.
#pragma once
#include "plugins/spank/spank_c.h"

#include <optional>
#include <string>

#include "plugins/spank/options.hpp"

namespace idletime::spank {

// Per-process plugin state: SPANK gives plugins no context pointer, so one instance lives here.
struct State {
    OptionState options;
};
State &state();

// spank_getenv into a std::string; nullopt when unset or unreadable.
std::optional<std::string> job_getenv(spank_t sp, const char *name);

// Local/allocator context: validate environment fallbacks, pass values to slurmctld.
// Returns -1 (nothing submitted) on invalid input.
int submit_side(spank_t sp);
// Remote context (slurmstepd, root): checkpoint directory and job environment. Never fails the job
// for idletime's own trouble; logs instead.
int job_side(spank_t sp);
// Remote context, in each task before exec (as the user): IDLETIME_RESTART_COUNT.
int task_side(spank_t sp);
// slurmd context, at slurmd start: GPU check of this node against its pool and Gres
// (node_check.cpp). Logs mismatches; drains only when the config says so. Never throws or blocks.
void slurmd_node_check(const std::string &config_path) noexcept;

}  // namespace idletime::spank
