#include "hook/resume.hpp"

namespace idletime::hook {

Resume resume_step(const ResumeView &v, uint32_t run, int cred_expire, int64_t now,
                   std::string &why) {
    if (!v.pending) {
        why = "no longer pending (started, held or ended)";
        return Resume::Leave;
    }
    if (v.restart_cnt != run) {
        why = "requeued again since (restart count " + std::to_string(v.restart_cnt) + ")";
        return Resume::Leave;
    }
    // Slurm sets the hold only when the job leaves COMPLETING (batch_requeue_fini): until then
    // the begin time shown is the previous one.
    if (v.completing) {
        why = "old allocation still completing on some node";
        return Resume::Wait;
    }
    if (v.eligible_time <= now) {
        why = "already eligible";
        return Resume::Leave;
    }
    // Slurm's own hold is requeue + cred_expire + 1 s (submit_time may be requeue + 1).
    const int64_t hold = v.eligible_time - v.submit_time;
    if (hold < cred_expire || hold > int64_t(cred_expire) + 1) {
        why = "begin time " + std::to_string(v.eligible_time) +
              " was not set by the requeue (user, admin or backoff): kept";
        return Resume::Leave;
    }
    if (now < v.submit_time + kRevokeGap) {
        why = "within the requeue's second";
        return Resume::Wait;
    }
    why = "old allocation released on every node";
    return Resume::Release;
}

}  // namespace idletime::hook
