// Check suite: the hook's plan for one ended run, table-driven over job snapshots.
#include <check.h>

#include "ft/judge.hpp"

using namespace idletime;
using namespace idletime::ft;

namespace {

constexpr int64_t kNow = 1700000000, kStart = 1699999000;

JobSnapshot failed_job(int code) {
    JobSnapshot j;
    j.job_id = 7;
    j.end = JobEnd::Failed;
    j.wait_status = code << 8;
    j.start_time = kStart;
    return j;
}

// A run of a job with a time limit that ended left_s before that limit, with USR1 as the notice.
JobSnapshot warned(int64_t left_s) {
    JobSnapshot j = failed_job(0);
    j.time_limit_s = 600;
    j.end_time = kStart + 600 - left_s;
    j.notice_signal = 10;
    j.notice_window_s = 90;
    return j;
}

std::string state_with(uint32_t p, uint32_t f, int64_t judged = -1) {
    JobState st;
    st.counters = {p, f};
    st.judged_start = judged;
    return state_serialize(st);
}

std::string report(uint32_t run, bool hung, std::vector<std::string> lines, uint32_t w = 0,
                   std::map<std::string, std::string> ov = {}) {
    AgentReport r;
    r.run = run;
    r.hung = hung;
    r.silent_s = hung ? 31 : 0;
    r.exit_code = hung ? 124 : 1;
    r.lines = std::move(lines);
    r.worker_restarts = w;
    r.overrides = std::move(ov);
    return report_serialize(r);
}

struct Row {
    const char *name;
    JobSnapshot (*make)();
    Op op;
    uint32_t p, f;
    const char *reason_start;  // decision reason prefix
    int notes;                 // expected number of notes
    uint32_t n = 0;            // node failures after
    const char *exclude = "";  // expected exclude_nodes, comma separated
};

// A run on a100-1,a100-2 that Slurm requeued (restart count already 3 -> the run was 2).
JobSnapshot node_requeued(std::vector<std::string> failed) {
    JobSnapshot j = failed_job(0);
    j.requeued = true;
    j.end = JobEnd::Requeued;
    j.restart_cnt = 3;
    j.nodes = {"a100-1", "a100-2"};
    j.failed_nodes = std::move(failed);
    return j;
}

const Row rows[] = {
    {"retryable", [] { return failed_job(137); }, Op::Requeue, 0, 1, "restart 1/3 after 10 s: exit code 137", 0},
    {"permanent", [] { return failed_job(1); }, Op::Record, 0, 0, "permanent failure: exit code 1", 0},
    {"limit", [] { auto j = failed_job(137); j.admin_comment = state_with(0, 3); return j; },
     Op::Record, 0, 3, "max restarts exceeded (last cause: exit code 137 (SIGKILL))", 0},
    {"signal", [] { auto j = failed_job(0); j.wait_status = 9; return j; }, Op::Requeue, 0, 1,
     "restart 1/3 after 10 s: killed by signal 9 (SIGKILL)", 0},
    {"preempted", [] { auto j = failed_job(143); j.end = JobEnd::Requeued; j.requeued = true;
                       j.preempt_time = kStart + 5; j.admin_comment = state_with(4, 1); return j; },
     Op::Record, 5, 1, "preempted (preemption 5)", 0},
    {"preempted-not-requeued", [] { auto j = failed_job(143); j.preempt_time = kStart + 5; return j; },
     Op::Requeue, 1, 0, "preempted (preemption 1)", 0},
    {"old-preempt-time", [] { auto j = failed_job(1); j.preempt_time = kStart - 100; return j; },
     Op::Record, 0, 0, "permanent failure", 0},
    {"max-preemptions", [] { auto j = failed_job(143); j.requeued = true; j.preempt_time = kStart + 1;
                             j.env_overrides = {{"max_preemptions", "1"}};
                             j.admin_comment = state_with(1, 0); return j; },
     Op::Cancel, 2, 0, "max preemptions exceeded (1)", 0},
    // Requeued during the epilog: start_time is Slurm's expected start (>= now), not the run's.
    {"preempt-pending-expected-start", [] { auto j = failed_job(143); j.end = JobEnd::Requeued;
                                            j.requeued = true; j.restart_cnt = 2; j.start_time = kNow;
                                            j.preempt_time = kNow - 1; return j; },
     Op::Record, 1, 0, "preempted (preemption 1)", 0},
    {"preempted-twice", [] { auto j = failed_job(143); j.end = JobEnd::Requeued; j.requeued = true;
                             j.restart_cnt = 2; j.start_time = kNow + 7; j.preempt_time = kNow - 1;
                             j.admin_comment = state_with(1, 0, 1); return j; },
     Op::Nothing, 0, 0, "", 1},
    {"done-in-grace", [] { auto j = failed_job(0); j.end = JobEnd::Completed; j.preempt_time = kStart + 1;
                           return j; }, Op::Record, 0, 0, "completed", 0},
    {"twice", [] { auto j = failed_job(137); j.admin_comment = state_with(0, 1, kStart); return j; },
     Op::Nothing, 0, 0, "", 1},
    {"hung", [] { auto j = failed_job(124); j.comment = report(0, true, {}); return j; },
     Op::Requeue, 0, 1, "restart 1/3 after 10 s: hung: no output or heartbeat for 31 s", 0},
    {"stale-report", [] { auto j = failed_job(124); j.restart_cnt = 2; j.comment = report(1, true, {});
                          return j; }, Op::Record, 0, 0, "permanent failure: exit code 124", 1},
    {"msg-policy", [] { auto j = failed_job(1); j.env_overrides = {{"ft_policy", "exit-code-and-error-msg"}};
                        j.comment = report(0, false, {"NCCL error: unhandled system error"}); return j; },
     Op::Requeue, 0, 1, "restart 1/3 after 10 s: exit code 1, output matched retryable", 0},
    {"msg-exit-code", [] { auto j = failed_job(1); j.comment = report(0, false, {"NCCL error"}); return j; },
     Op::Record, 0, 0, "permanent failure: exit code 1", 0},
    {"garbage-state", [] { auto j = failed_job(137); j.admin_comment = "{{{"; return j; },
     Op::Requeue, 0, 1, "restart 1/3", 1},
    {"env-limit", [] { auto j = failed_job(137); j.env_overrides = {{"max_restarts", "1"}};
                       j.admin_comment = state_with(0, 1); return j; },
     Op::Record, 0, 1, "max restarts exceeded", 0},
    {"bad-env", [] { auto j = failed_job(137); j.env_overrides = {{"max_restarts", "-1"}}; return j; },
     Op::Requeue, 0, 1, "restart 1/3", 1},
    {"async-restarts", [] { auto j = failed_job(137); j.comment = report(0, false, {}, 2); return j; },
     Op::Requeue, 0, 3, "restart 3/3 after 40 s", 0},
    {"async-spent", [] { auto j = failed_job(137); j.comment = report(0, false, {}, 3); return j; },
     Op::Record, 0, 3, "max restarts exceeded", 0},
    {"report-overrides", [] { auto j = failed_job(137);
                              j.comment = report(0, false, {}, 0, {{"max_restarts", "0"}}); return j; },
     Op::Record, 0, 0, "max restarts exceeded", 0},
    // Issue 11 item 7: counters saturate; a job's max_restarts is capped by the site's.
    {"forged-w-max", [] { auto j = failed_job(137); j.admin_comment = state_with(0, 1);
                          j.comment = report(0, false, {}, 4294967295u); return j; },
     Op::Record, 0, 4294967295u, "max restarts exceeded", 0},
    {"forged-w-wrap-exact", [] { auto j = failed_job(137); j.admin_comment = state_with(0, 2);
                                 j.comment = report(0, false, {}, 4294967294u); return j; },
     Op::Record, 0, 4294967295u, "max restarts exceeded", 0},
    {"job-asks-more-than-site", [] { auto j = failed_job(137); j.env_overrides = {{"max_restarts", "50"}};
                                     j.admin_comment = state_with(0, 3); return j; },
     Op::Record, 0, 3, "max restarts exceeded", 1},
    {"report-asks-more-than-site", [] { auto j = failed_job(137); j.admin_comment = state_with(0, 3);
                                        j.comment = report(0, false, {}, 0, {{"max_restarts", "1000"}});
                                        return j; },
     Op::Record, 0, 3, "max restarts exceeded", 1},
    {"job-asks-more-restart-shows-site", [] { auto j = failed_job(137); j.env_overrides = {{"max_restarts", "9"}};
                                              return j; },
     Op::Requeue, 0, 1, "restart 1/3 after 10 s", 1},
    {"oom", [] { auto j = failed_job(0); j.end = JobEnd::OutOfMemory; j.wait_status = 9; return j; },
     Op::Record, 0, 0, "permanent failure: out of memory", 0},
    {"cancelled", [] { auto j = failed_job(0); j.end = JobEnd::Cancelled; j.wait_status = 15; return j; },
     Op::Record, 0, 0, "permanent failure: cancelled", 0},
    {"timeout", [] { auto j = failed_job(0); j.end = JobEnd::Timeout; return j; },
     Op::Record, 0, 0, "time limit reached", 0},
    // A batch shell without a trap dies of the time-limit warning (same signal as the notice):
    // that run reached its limit, it is not a failure to retry (hostile-user trial finding).
    {"warning-death", [] { auto j = warned(10); j.wait_status = 10; return j; },
     Op::Record, 0, 0, "time limit reached", 0},
    {"warning-death-shell", [] { auto j = warned(10); j.wait_status = (128 + 10) << 8; return j; },
     Op::Record, 0, 0, "time limit reached", 0},
    {"usr1-long-before-limit", [] { auto j = warned(3600); j.wait_status = 10; return j; },
     Op::Requeue, 0, 1, "restart 1/3", 0},
    {"other-signal-at-limit", [] { auto j = warned(10); j.wait_status = 9; return j; },
     Op::Requeue, 0, 1, "restart 1/3", 0},
    // --requeue-at-time-limit: requeued by the hook, within the max_restarts budget.
    {"timeout-requeue", [] { auto j = failed_job(0); j.end = JobEnd::Timeout;
                             j.env_overrides = {{"requeue_at_time_limit", "yes"}}; return j; },
     Op::Requeue, 0, 0, "requeued at its time limit (--requeue-at-time-limit, restart 1/3)", 0},
    {"timeout-requeue-no", [] { auto j = failed_job(0); j.end = JobEnd::Timeout;
                                j.env_overrides = {{"requeue_at_time_limit", "no"}}; return j; },
     Op::Record, 0, 0, "time limit reached", 0},
    {"timeout-requeue-spent", [] { auto j = failed_job(0); j.end = JobEnd::Timeout;
                                   j.admin_comment = state_with(0, 3);
                                   j.env_overrides = {{"requeue_at_time_limit", "yes"}}; return j; },
     Op::Record, 0, 3, "max restarts exceeded (last cause: time limit reached)", 0},
    {"timeout-requeue-bad", [] { auto j = failed_job(0); j.end = JobEnd::Timeout;
                                 j.env_overrides = {{"requeue_at_time_limit", "maybe"}}; return j; },
     Op::Record, 0, 0, "time limit reached", 1},
    {"user-requeue", [] { auto j = failed_job(0); j.end = JobEnd::Requeued; j.requeued = true;
                          j.admin_comment = state_with(1, 1); return j; },
     Op::Record, 1, 1, "requeued by its owner", 0},
    // Node failures: never the failure budget, failed nodes excluded unless required (-w).
    {"node-fail", [] { auto j = failed_job(0); j.end = JobEnd::NodeFail; j.requeued = true; return j; },
     Op::Record, 0, 0, "node failure 1, restarting elsewhere", 0, 1},
    {"node-fail-not-requeued", [] { auto j = failed_job(143); j.end = JobEnd::NodeFail;
                                    j.nodes = {"a100-1"}; j.failed_nodes = {"a100-1"};
                                    j.admin_comment = state_with(0, 3); return j; },
     Op::Requeue, 0, 3, "node failure 1, restarting elsewhere", 0, 1, "a100-1"},
    {"node-requeued", [] { return node_requeued({"a100-2"}); }, Op::Record, 0, 0,
     "node failure 1, restarting elsewhere", 0, 1, "a100-2"},
    {"node-required", [] { auto j = node_requeued({"a100-1", "a100-2"}); j.required_nodes = {"a100-1"};
                           return j; }, Op::Record, 0, 0, "node failure 1", 0, 1, "a100-2"},
    {"node-other", [] { return node_requeued({"h100-9"}); }, Op::Record, 0, 0, "node failure 1", 0, 1, ""},
    {"node-report", [] { auto j = node_requeued({"a100-1"}); j.comment = report(2, false, {}, 1); return j; },
     Op::Record, 0, 1, "node failure 1", 0, 1, "a100-1"},
    {"node-cap", [] { auto j = node_requeued({"a100-1"});
                      JobState st; st.counters.node_failures = kMaxNodeFailures;
                      j.admin_comment = state_serialize(st); return j; },
     Op::Cancel, 0, 0, "max node failures exceeded (10)", 0, kMaxNodeFailures + 1},
    {"node-back-already", [] { auto j = node_requeued({}); j.node_requeue = true; return j; },
     Op::Record, 0, 0, "node failure 1", 0, 1, "a100-1,a100-2"},
    {"node-up-owner-requeue", [] { return node_requeued({}); }, Op::Record, 0, 0, "requeued by its owner", 0},
    {"preempt-requeued-report", [] { auto j = node_requeued({}); j.preempt_time = kStart + 3;
                                     j.comment = report(2, false, {}, 1); return j; },
     Op::Record, 1, 1, "preempted (preemption 1)", 0},
    {"user-comment", [] { auto j = failed_job(137); j.comment = "my notes"; return j; },
     Op::Requeue, 0, 1, "restart 1/3", 0},
    {"running", [] { auto j = failed_job(0); j.end = JobEnd::Other; return j; }, Op::Nothing, 0, 0, "", 1},
    {"success", [] { auto j = failed_job(0); j.end = JobEnd::Completed; return j; },
     Op::Record, 0, 0, "completed", 0},
    // A site partition's own job (review finding: the hook judged every job of the cluster).
    {"site-job", [] { auto j = failed_job(137); j.managed_partition = false; return j; },
     Op::Nothing, 0, 0, "", 1},
    {"site-job-operator-note", [] { auto j = failed_job(137); j.managed_partition = false;
                                    j.admin_comment = "ticket 4711"; return j; },
     Op::Nothing, 0, 0, "", 1},
    {"site-partition-with-options", [] { auto j = failed_job(137); j.managed_partition = false;
                                         j.env_overrides = {{"max_restarts", "2"}}; return j; },
     Op::Requeue, 0, 1, "restart 1/2", 0},
    {"site-partition-with-state", [] { auto j = failed_job(137); j.managed_partition = false;
                                       j.admin_comment = state_with(0, 1); return j; },
     Op::Requeue, 0, 2, "restart 2/3", 0},
};

START_TEST(t_judge) {
    const Row &r = rows[_i];
    FtSettings site;
    const JobSnapshot snap = r.make();
    Plan p = judge(site, snap, kNow);
    ck_assert_msg(p.op == r.op, "%s: op %s", r.name, op_str(p.op));
    ck_assert_msg(int(p.notes.size()) == r.notes, "%s: %zu notes%s%s", r.name, p.notes.size(),
                  p.notes.empty() ? "" : ": ", p.notes.empty() ? "" : p.notes[0].c_str());
    if (p.op == Op::Nothing) return;
    ck_assert_msg(p.decision.reason.rfind(r.reason_start, 0) == 0, "%s: reason %s", r.name,
                  p.decision.reason.c_str());
    ck_assert_uint_eq(p.new_state.counters.preemptions, r.p);
    ck_assert_uint_eq(p.new_state.counters.failures, r.f);
    ck_assert_uint_eq(p.new_state.counters.node_failures, r.n);
    std::string excl;
    for (const auto &n : p.exclude_nodes) excl += (excl.empty() ? "" : ",") + n;
    ck_assert_msg(excl == r.exclude, "%s: exclude '%s'", r.name, excl.c_str());
    // Run key: its start time, or its number when requeued (a pending job reports no start).
    ck_assert_int_eq(p.new_state.judged_start, snap.requeued ? int64_t(ended_run(snap)) : kStart);
    if (p.op == Op::Requeue) {
        ck_assert_int_eq(p.begin_at, kNow + p.decision.delay_s);
        ck_assert_str_eq(p.new_state.pending.c_str(), "requeue");
    }
    // What the hook stores must parse back to the same counters.
    JobState back;
    std::string err;
    ck_assert(state_parse(state_serialize(p.new_state), back, err));
    ck_assert_uint_eq(back.counters.failures, r.f);
    ck_assert_uint_eq(back.counters.node_failures, r.n);
    if (!p.new_state.history.empty())
        ck_assert_uint_eq(p.new_state.history.back().run, ended_run(r.make()));
}
END_TEST

// The newest checkpoint published in the Comment is kept with the run (what the next run
// resumes from) and survives the round trip; a Comment without a valid token gives 0.
struct CkptRow {
    const char *comment;
    int64_t want;
};
const CkptRow ckpt_rows[] = {
    {"idletime:ckpt=1700000123", 1700000123},
    {"my notes idletime:ckpt=1700000124", 1700000124},
    {"idletime:ckpt=1700000125;other", 1700000125},
    {"xidletime:ckpt=1700000126", 0},
    {"idletime:ckpt=12ab", 0},
    {"idletime:ckpt=", 0},
    {"my notes", 0},
    {"", 0},
};

START_TEST(t_judge_ckpt) {
    const CkptRow &r = ckpt_rows[_i];
    JobSnapshot j = failed_job(137);
    j.comment = r.comment;
    Plan p = judge(FtSettings{}, j, kNow);
    ck_assert_uint_eq(p.new_state.history.size(), 1);
    ck_assert_int_eq(p.new_state.history.back().ckpt, r.want);
    JobState back;
    std::string err;
    ck_assert(state_parse(state_serialize(p.new_state), back, err));
    ck_assert_int_eq(back.history.back().ckpt, r.want);
    ck_assert_int_eq(state_serialize(p.new_state).find("\"c\":") != std::string::npos, r.want != 0);
}
END_TEST

}  // namespace

Suite *ft_suite_judge();

Suite *ft_suite_judge() {
    Suite *s = suite_create("ft-judge");
    TCase *t = tcase_create("judge");
    tcase_add_loop_test(t, t_judge, 0, int(sizeof rows / sizeof rows[0]));
    tcase_add_loop_test(t, t_judge_ckpt, 0, int(sizeof ckpt_rows / sizeof ckpt_rows[0]));
    suite_add_tcase(s, t);
    return s;
}
