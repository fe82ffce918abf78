// Several seeds per configuration: the spread (min / median / max over seeds) of each metric.
#pragma once
#include "report.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace idletime::replay {

// by_seed[i] holds the configurations' results of seeds[i] (same configurations, same order).
// Writes report.md (the spread table, then a link per seed to its own report) and summary.csv
// (one row per configuration and seed). Throws std::runtime_error when a file cannot be written.
void write_spread_md(const std::string &report_path, const std::string &summary_path,
                     const std::vector<uint64_t> &seeds,
                     const std::vector<std::vector<ConfigResult>> &by_seed, const std::string &command);

}  // namespace idletime::replay
