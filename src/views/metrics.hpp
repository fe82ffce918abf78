// Prometheus/OpenMetrics text of the views, for idletime-exporter(8). Pure: the same inputs as
// `idletime quota` and `idletime jobs` (config accounting and derived job views) and the time.
// Every name starts with "idletime_"; labels are bounded by the config (tenant, pool, quota) or by
// fixed sets (mode, status, cause); never a job id, user or node. idletime-exporter(8) lists
// every series and what each is derived from.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "views/accounting.hpp"
#include "views/job.hpp"

namespace idletime::views {

// Histogram bucket upper bounds (seconds) of the wait and age histograms.
extern const std::vector<double> kWaitBuckets;

struct Histogram {
    std::vector<uint64_t> counts;  // per bucket of kWaitBuckets (not cumulative), then +Inf
    double sum = 0;
    uint64_t count = 0;
    Histogram() : counts(kWaitBuckets.size() + 1, 0) {}
    void observe(double v);
};

// What the exporter adds about itself.
struct ScrapeInfo {
    bool slurm_up = true;          // slurm_load_jobs succeeded
    double load_seconds = 0;       // time spent in libslurm for this scrape
    std::string version;           // PACKAGE_VERSION
};

// The whole exposition (text format 0.0.4, "# HELP"/"# TYPE" per family, "\n"-terminated).
std::string metrics_text(const Accounting &a, const std::vector<JobView> &jobs, int64_t now,
                         const ScrapeInfo &info);

// Restart cause of a fault-tolerance history kind: "preemption", "exit_code" (exit or signal),
// "error_message", "hang", "node", "time_limit"; "" for kinds that are not restarts.
const char *restart_cause(const std::string &kind);

// Label value escaped as the text format wants (backslash, double quote, newline).
std::string label_escape(const std::string &v);

}  // namespace idletime::views
