// Mode resolution: which partitions a submission goes to and whether it is preemptible there.
// Rules (product.md, behaviours 1-3): general pools borrow only within their own pool;
// high-performance pools across every pool of the same GPU spec in the same tenant; never
// across tenants.
#pragma once
#include <string>
#include <vector>

#include "core/config.hpp"

namespace idletime {

enum class Mode { None, Acceptable, Only };

bool mode_parse(const std::string &text, Mode &out);
const char *mode_name(Mode m);

struct Request {
    std::string quota;     // --quota; empty = from the account
    std::string account;   // the job's Slurm account; required
    Mode mode = Mode::None;
    std::string gpu_spec;  // requested GPU type; empty = any
};

struct Target {
    std::string partition;
    bool preemptible = false;  // a job that starts here may be preempted for the rest of that run
};

struct Resolution {
    const Quota *quota = nullptr;
    const Pool *pool = nullptr;
    std::vector<Target> targets;  // in preference order: quota partition first
    bool requeue = false;         // preempted runs are requeued (idle-capable modes)
    std::string partition_list() const;  // "quota-a,idle-p1,idle-p2"
};

// Returns false with a one-line err naming what is allowed.
bool resolve(const Config &cfg, const Request &req, Resolution &out, std::string &err);

// The idle partitions a quota's idle-time jobs may use (own pool first).
std::vector<const Pool *> borrowable_pools(const Config &cfg, const Quota &q);

}  // namespace idletime
