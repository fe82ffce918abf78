// idletime-ft-hook's command line: its options, their parsing (idletime-ft-hook(8)) and the
// detach that lets EpilogSlurmctld return at once.
#pragma once
#include <cstdint>
#include <string>

#ifndef IDLETIME_DEFAULT_CONFIG
#define IDLETIME_DEFAULT_CONFIG "/etc/idletime/idletime.json"
#endif
#ifndef IDLETIME_DEFAULT_WAKE_DIR
#define IDLETIME_DEFAULT_WAKE_DIR "/var/lib/idletime/ft-hook-wake"
#endif
#ifndef IDLETIME_DEFAULT_LAST_GOOD
#define IDLETIME_DEFAULT_LAST_GOOD "/var/lib/idletime/ft-hook-last-good.json"
#endif

namespace idletime::hook {

constexpr const char *kProg = "idletime-ft-hook";

struct Options {
    std::string config = IDLETIME_DEFAULT_CONFIG;
    std::string log;
    std::string last_good = IDLETIME_DEFAULT_LAST_GOOD;  // "" = no cache
    std::string wake_dir;  // "" = next to last_good (see wake_spool())
    uint32_t job_id = 0;
    bool foreground = false;
    bool recover = false;  // --recover: finish the work of hooks that were stopped, then exit
    int wait_s = 300;  // how long to keep trying while slurmctld is busy or restarting
    int snapshot_s = 5;  // foreground: how long to try to load the job before detaching
    int accounting_s = 20;  // the job's end record reaches slurmdbd within seconds
};

// A positive decimal number that fits 32 bits, nothing else.
bool parse_u32(const char *s, uint32_t &out);

// Fills o from argv and $SLURM_JOB_ID; on bad input prints one line to stderr and returns false
// (exit kExitUsage). --help and --version print and exit.
bool parse_args(int argc, char **argv, Options &o);

// Forks into the background (the caller's parent returns 0 to slurmctld), stdio on /dev/null.
void detach();

}  // namespace idletime::hook
