// Files of a replay report: per configuration runs.csv, samples.csv, alloc.csv; across
// configurations summary.csv, report.md and gnuplot plots (alloc.{png,svg}, waits.{png,svg}).
#pragma once
#include "replay/metrics.hpp"

#include <string>
#include <vector>

namespace idletime::replay {

struct ConfigResult {
    char letter;
    std::string title;
    std::string ctld;  // the running slurmctld's plugins, as checked (e.g. "PreemptType=...")
    EventLog log;
    Metrics metrics;
    std::vector<std::string> violations;
};

void write_config_files(const std::string &dir, const ConfigResult &r);
void write_summary_csv(const std::string &path, const std::vector<ConfigResult> &results);
// Markdown report; `command` is the exact command line, `mapping` a Markdown block about the stream.
void write_report_md(const std::string &path, const std::vector<ConfigResult> &results,
                     const std::string &command, const std::string &mapping);
// Writes the gnuplot scripts and runs gnuplot on them; returns false (message on stderr) if it failed.
bool write_plots(const std::string &dir, const std::vector<ConfigResult> &results);

}  // namespace idletime::replay
