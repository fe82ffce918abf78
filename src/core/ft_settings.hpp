// Fault-tolerance settings: site defaults from the config's "fault_tolerance" object,
// overridable per job by SPANK options. Plain data; the rules live in src/ft/.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace idletime {

enum class FtPolicy { None, ExitCode, ExitCodeAndErrorMsg };
enum class RunType { Sync, Async };

struct FtSettings {
    uint32_t max_restarts = 3;      // failure restarts per job; preemptions never count
    uint32_t max_preemptions = 0;   // 0 = unlimited
    FtPolicy policy = FtPolicy::ExitCode;
    RunType run_type = RunType::Sync;
    // Exit statuses as the shell reports them: 0-255, 128+N = killed by signal N.
    std::vector<int> retryable_exit_codes{130, 134, 137, 138, 143};
    std::vector<int> permanent_exit_codes{1, 2, 126, 127, 139};
    // ECMAScript regular expressions matched against the job's output lines.
    std::vector<std::string> retryable_patterns{
        "NCCL error", "unhandled system error", "Watchdog caught collective operation timeout",
        "CUDA error: an illegal memory access", "uncorrectable ECC error",
        "Connection reset by peer"};
    std::vector<std::string> permanent_patterns{"CUDA out of memory"};
    uint32_t hang_timeout_s = 0;        // 0 = hang detection off
    uint32_t backoff_initial_s = 10;    // delay before the first failure restart
    double backoff_factor = 2.0;        // growth per further restart
    uint32_t backoff_max_s = 300;       // cap
    // Per job only (--requeue-at-time-limit): a run that reaches its time limit is requeued
    // instead of ending TIMEOUT; counted and limited like a failure restart (max_restarts).
    bool requeue_at_time_limit = false;
};

const char *ft_policy_name(FtPolicy p);
const char *run_type_name(RunType r);

}  // namespace idletime
