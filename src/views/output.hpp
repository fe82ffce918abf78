// Text and JSON output of the views. The JSON shapes are a stable interface (schema_version 1,
// documented in idletime-jobs(1) and idletime-quota(1)): fields are only ever added.
#pragma once
#include <string>
#include <vector>

#include "views/accounting.hpp"
#include "views/check.hpp"
#include "views/job.hpp"

namespace idletime::views {

constexpr int kSchemaVersion = 1;

// ---- job list ----
// A --format string like squeue's: "%i %.10j %-8u": %[-|.][WIDTH]LETTER; "." right-justifies,
// default left; WIDTH pads (never truncates). Letters: see kFieldHelp. "%%" is a percent sign.
struct FormatItem {
    std::string literal;  // text before the field
    char field = 0;       // 0 = literal only
    bool right = false;
    size_t width = 0;
};
// False with err naming the bad letter and the allowed ones.
bool format_parse(const std::string &fmt, std::vector<FormatItem> &out, std::string &err);
extern const char *const kFieldHelp;

// One field of a job as text ("In Quota", "2/1", "4m10s"...).
std::string job_field(const JobView &v, char field);

// The default table: JOBID NAME USER QUOTA MODE STATUS RESOURCES GPUS RESTARTS(P/F) AGE NODES,
// columns as wide as their widest cell, one header line.
std::string jobs_table(const std::vector<JobView> &jobs, bool header);
std::string jobs_formatted(const std::vector<JobView> &jobs, const std::vector<FormatItem> &fmt, bool header);
std::string jobs_json(const std::vector<JobView> &jobs, int64_t now);

// ---- quota view ----
std::string quota_table(const Accounting &a);
std::string quota_json(const Accounting &a, int64_t now);

// ---- check ----
std::string findings_text(const std::vector<Finding> &f);
std::string findings_json(const std::vector<Finding> &f);

// Column layout helper: pads every column to its widest cell (last column unpadded).
std::string columns(const std::vector<std::vector<std::string>> &rows);

}  // namespace idletime::views
