// idletime-run: the in-job agent. Launches the workers (child processes or srun steps), tees
// their output, watches output time, error patterns and heartbeats, forwards signals, stops a
// hung job, restarts failed workers (async) and leaves a report in the job's Comment.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ft/ft.hpp"

namespace idletime::agent {

// Exit statuses of idletime-run besides the workers' own (0-255, 128+N = signal N).
constexpr int kExitHung = 124;     // stopped because it was hung (report says "h")
constexpr int kExitUsage = 2;      // bad command line or settings; nothing was started
constexpr int kExitLaunch = 127;   // a worker could not be started

struct Options {
    FtSettings ft;                             // site defaults + the overrides below
    std::map<std::string, std::string> overrides;  // per-job settings (flags > env)
    std::vector<std::string> cmd;
    uint32_t workers = 1;
    bool srun = false;             // launch each worker as its own srun step
    std::string heartbeat_dir;     // per-worker heartbeat files hb.<i>; default a temp dir
    uint32_t kill_wait_s = 5;      // SIGTERM -> SIGKILL when stopping workers
    bool report = true;            // write the report into the job's Comment
    std::string config;            // site config (fault_tolerance object)
    char info = 0;                 // 'h' --help, 'V' --version: print it, run nothing, exit 0
};

extern const char *const kUsage;

// Parses argv (flags, then "--", then CMD...) and the IDLETIME_* environment. On error returns
// false with a one-line message naming the option and what is allowed.
bool parse_options(int argc, char **argv, Options &o, std::string &err);

struct Outcome {
    int status = 0;               // exit status for idletime-run
    bool hung = false;
    uint32_t silent_s = 0;
    uint32_t worker_restarts = 0;
    std::vector<std::string> lines;  // matched output lines, newest last
};

// Runs the workers to the end. base_failures: failure restarts the job already used (from
// its AdminComment), so async restarts inside the allocation share the job's budget.
Outcome run_workers(const Options &o, uint32_t base_failures);

}  // namespace idletime::agent
