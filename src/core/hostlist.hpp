// Slurm hostlist syntax ("a100-[1-4,7]", "cpu-1,cpu-2") without Slurm: the core must not link it.
#pragma once
#include <string>
#include <vector>

namespace idletime {

// Expands a hostlist into node names, in order. Returns false and sets err on bad syntax
// (unbalanced brackets, empty names, ranges like [4-1], more than max_nodes names).
bool hostlist_expand(const std::string &spec, std::vector<std::string> &out, std::string &err,
                     size_t max_nodes = 65536);

}  // namespace idletime
