// Command line of idletime-replay.
#pragma once
#include "replay/mapping.hpp"

#include <string>

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
};

// Parses argv; on bad input prints one line naming the problem and exits with status 2.
Options parse_options(int argc, char **argv);

}  // namespace idletime::replay
