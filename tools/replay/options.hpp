// Command line of idletime-replay.
#pragma once
#include "replay/mapping.hpp"

#include <set>
#include <string>
#include <vector>

namespace idletime::replay {

struct Options {
    std::string command;   // "map" or "run"
    std::string trace, kind = "openb", out;
    MapOptions map;
    std::string configs = "ABCD";
    std::string cluster_dir = "/var/tmp/idletime-cluster";
    std::string start_script, prefix = "/usr/local", worker;
    double poll_s = 0.5, timeout_s = 0, ckpt_every_s = 10;
    int requeue_delay_s = 0;        // 0 = Slurm's default (cred_expire 120 s)
    bool route_by_plugin = true;    // C: job_submit/idletime picks the partition
    bool allow_foreign = false;
    std::string command_line;       // as given, for the report
    std::string site_config;        // --site-config: quotas from the site's idletime.json
    std::vector<uint64_t> seeds;    // --seeds: one replay of every configuration per seed
    int procs_per_gpu = 1;          // SWF processors per GPU
    std::set<std::string> given;    // options given on the command line (kind defaults fill the rest)
};

// Defaults that depend on the trace kind, for options not given: openb keeps its 12-hour
// window at 240x, 80 % sample, 2 hashed teams per pool and QOS BE as idle-time; sacct and swf
// take the whole trace (window set by the caller from the records), every job, quotas per
// account, 25 % of each account's jobs as idle-time, gangs of whole nodes.
void apply_kind_defaults(Options &o);

// Parses argv; on bad input prints one line naming the problem and exits with status 2.
Options parse_options(int argc, char **argv);

}  // namespace idletime::replay
