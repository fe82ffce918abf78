// When a preempted idle-time job may run again (issue 14). Slurm 22.05 gives every requeued job
// BeginTime = requeue + cred_expire + 1 s, so that no credential of the run that ended can be
// used once the next run has made slurmd forget the revocation. The hook lifts that hold for
// preempted runs once slurmctld vouches that the old allocation is cleaned up on every node.
// Pure decision, no Slurm and no I/O; see doc/design/notice-and-release.md section 5.
#pragma once
#include <cstdint>
#include <string>

namespace idletime::hook {

// What slurmctld reports about the requeued job now.
struct ResumeView {
    bool pending = false;     // base state PENDING
    bool completing = false;  // COMPLETING flag: some node of the old allocation is not done
    uint32_t restart_cnt = 0;
    int64_t submit_time = 0;    // Slurm sets it to the requeue time
    int64_t eligible_time = 0;  // BeginTime
};

enum class Resume {
    Wait,     // ask again shortly
    Release,  // set BeginTime to now
    Leave,    // nothing to do (started, a later run, a begin time someone chose, ...)
};

// run: restart count of the requeued run the hook judged as a preemption; cred_expire: the
// credential lifetime slurmctld uses. why: one line for the log.
Resume resume_step(const ResumeView &v, uint32_t run, int cred_expire, int64_t now,
                   std::string &why);

// Seconds after the requeue before a new run may be launched: slurmd records the revocation
// of the old credential with 1 s resolution and refuses any credential not newer than it.
constexpr int64_t kRevokeGap = 2;

}  // namespace idletime::hook
