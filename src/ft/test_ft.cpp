// Check suite for the fault-tolerance core: one table per rule. CK_RUN_CASE picks a case.
#include <check.h>

#include <string>
#include <vector>

#include "ft/ft.hpp"

using namespace idletime;
using namespace idletime::ft;

namespace {

FtSettings base() {
    FtSettings s;
    s.policy = FtPolicy::ExitCodeAndErrorMsg;
    return s;
}

struct ClassRow {
    FtPolicy policy;
    ExitInfo in;
    Verdict want;
    const char *reason;  // exact reason
};

ExitInfo ex(int code, int sig = 0, std::vector<std::string> lines = {}) {
    ExitInfo e;
    e.exit_code = code;
    e.signal = sig;
    e.output_lines = std::move(lines);
    return e;
}
ExitInfo flag(bool ExitInfo::*f, int code = 0) {
    ExitInfo e = ex(code);
    e.*f = true;
    return e;
}

const FtPolicy E = FtPolicy::ExitCode, EM = FtPolicy::ExitCodeAndErrorMsg, N = FtPolicy::None;

const ClassRow class_rows[] = {
    {E, ex(0), Verdict::Success, "completed"},
    {E, ex(137), Verdict::Retryable, "exit code 137 (SIGKILL)"},
    {E, ex(143), Verdict::Retryable, "exit code 143 (SIGTERM)"},
    {E, ex(138), Verdict::Retryable, "exit code 138 (SIGUSR1)"},
    {E, ex(139), Verdict::Permanent, "exit code 139 (SIGSEGV)"},
    {E, ex(1), Verdict::Permanent, "exit code 1"},
    {E, ex(127), Verdict::Permanent, "exit code 127"},
    {E, ex(42), Verdict::Permanent, "exit code 42"},               // unlisted < 128
    {E, ex(0, 15), Verdict::Retryable, "killed by signal 15 (SIGTERM)"},
    {E, ex(0, 11), Verdict::Permanent, "killed by signal 11 (SIGSEGV)"},
    {E, ex(0, 40), Verdict::Retryable, "killed by signal 40"},   // unlisted signal
    {E, ex(200), Verdict::Retryable, "exit code 200"},            // unlisted >= 128
    {N, ex(137), Verdict::Permanent, "exit code 137 (SIGKILL), restart policy none"},
    {N, ex(0), Verdict::Success, "completed"},
    {N, flag(&ExitInfo::preempted, 143), Verdict::Preempted, "preempted"},
    {E, flag(&ExitInfo::preempted, 0), Verdict::Preempted, "preempted"},
    {E, flag(&ExitInfo::cancelled, 143), Verdict::Permanent, "cancelled"},
    {E, flag(&ExitInfo::timeout, 143), Verdict::TimeLimit, "time limit reached"},
    {E, flag(&ExitInfo::node_fail), Verdict::NodeFailure, "node failure"},
    {N, flag(&ExitInfo::node_fail, 0), Verdict::NodeFailure, "node failure"},  // any policy
    {E, flag(&ExitInfo::node_fail, 1), Verdict::NodeFailure, "node failure"},  // any exit
    {E, flag(&ExitInfo::hung, 124), Verdict::Retryable, "hung: no output or heartbeat for 0 s"},
    {N, flag(&ExitInfo::hung, 124), Verdict::Permanent, "exit code 124, restart policy none"},
    // error messages: only under exit-code-and-error-msg
    {EM, ex(1, 0, {"x", "NCCL error in ring"}), Verdict::Retryable,
     "exit code 1, output matched retryable pattern \"NCCL error\""},
    {E, ex(1, 0, {"NCCL error in ring"}), Verdict::Permanent, "exit code 1"},
    {EM, ex(137, 0, {"RuntimeError: CUDA out of memory"}), Verdict::Permanent,
     "exit code 137 (SIGKILL), output matched permanent pattern \"CUDA out of memory\""},
    {EM, ex(1, 0, {"NCCL error", "CUDA out of memory"}), Verdict::Permanent,
     "exit code 1, output matched permanent pattern \"CUDA out of memory\""},
    {EM, ex(1, 0, {"all fine"}), Verdict::Permanent, "exit code 1"},
    {EM, ex(0, 0, {"NCCL error"}), Verdict::Success, "completed"},
};

START_TEST(t_classify) {
    const ClassRow &r = class_rows[_i];
    FtSettings s = base();
    s.policy = r.policy;
    Matcher m(s);
    Classification c = classify(s, m, r.in);
    ck_assert_msg(c.verdict == r.want, "row %d: verdict %s want %s", _i, verdict_str(c.verdict),
                  verdict_str(r.want));
    ck_assert_str_eq(c.reason.c_str(), r.reason);
}
END_TEST

struct DecRow {
    uint32_t max_restarts, max_preemptions;
    Counters in;
    Verdict v;
    Action want;
    uint32_t p, f, delay;
    const char *reason;
};

const DecRow dec_rows[] = {
    {3, 0, {0, 0}, Verdict::Success, Action::Complete, 0, 0, 0, "completed"},
    {3, 0, {0, 0}, Verdict::Retryable, Action::Restart, 0, 1, 10, "restart 1/3 after 10 s: C"},
    {3, 0, {0, 2}, Verdict::Retryable, Action::Restart, 0, 3, 40, "restart 3/3 after 40 s: C"},
    {3, 0, {0, 3}, Verdict::Retryable, Action::Fail, 0, 3, 0,
     "max restarts exceeded (last cause: C)"},
    {0, 0, {0, 0}, Verdict::Retryable, Action::Fail, 0, 0, 0,
     "max restarts exceeded (last cause: C)"},
    {3, 0, {0, 0}, Verdict::Permanent, Action::Fail, 0, 0, 0, "permanent failure: C"},
    // preemptions never use the failure budget, and need no backoff
    {1, 0, {4, 1}, Verdict::Preempted, Action::Restart, 5, 1, 0, "preempted (preemption 5)"},
    {0, 0, {99, 0}, Verdict::Preempted, Action::Restart, 100, 0, 0, "preempted (preemption 100)"},
    {1, 2, {2, 0}, Verdict::Preempted, Action::Fail, 3, 0, 0, "max preemptions exceeded (2)"},
    {1, 2, {1, 0}, Verdict::Preempted, Action::Restart, 2, 0, 0, "preempted (preemption 2)"},
    // failure after many preemptions still has its full budget
    {1, 0, {5, 0}, Verdict::Retryable, Action::Restart, 5, 1, 10, "restart 1/1 after 10 s: C"},
    // node failures: own counter, no backoff, capped at kMaxNodeFailures
    {0, 0, {0, 0, 0}, Verdict::NodeFailure, Action::Restart, 0, 0, 0,
     "node failure 1, restarting elsewhere"},
    {1, 0, {0, 1, 9}, Verdict::NodeFailure, Action::Restart, 0, 1, 0,
     "node failure 10, restarting elsewhere"},
    {3, 0, {0, 0, 10}, Verdict::NodeFailure, Action::Fail, 0, 0, 0,
     "max node failures exceeded (10)"},
};

START_TEST(t_decide) {
    const DecRow &r = dec_rows[_i];
    FtSettings s = base();
    s.max_restarts = r.max_restarts;
    s.max_preemptions = r.max_preemptions;
    Classification cl{r.v, "C", "exit"};
    Decision d = decide(s, r.in, cl);
    ck_assert_msg(d.action == r.want, "row %d: action %s", _i, action_str(d.action));
    ck_assert_uint_eq(d.after.preemptions, r.p);
    ck_assert_uint_eq(d.after.failures, r.f);
    ck_assert_uint_eq(d.delay_s, r.delay);
    ck_assert_str_eq(d.reason.c_str(), r.reason);
}
END_TEST

struct BackRow {
    uint32_t initial;
    double factor;
    uint32_t max, n, want;
};
const BackRow back_rows[] = {
    {10, 2, 300, 0, 0},   {10, 2, 300, 1, 10},  {10, 2, 300, 2, 20},   {10, 2, 300, 5, 160},
    {10, 2, 300, 6, 300}, {10, 2, 300, 60, 300}, {10, 2, 300, 100000, 300}, {0, 2, 300, 3, 0},
    {5, 1, 300, 9, 5},    {7, 1.5, 20, 2, 10},  {7, 1.5, 20, 3, 15},   {7, 1.5, 20, 4, 20},
};

// Counters saturate (issue 11 item 7): never wrap back to a fresh budget.
START_TEST(t_counters_saturate) {
    ck_assert_uint_eq(sat_add(UINT32_MAX, 1), UINT32_MAX);
    ck_assert_uint_eq(sat_add(1, UINT32_MAX), UINT32_MAX);
    ck_assert_uint_eq(sat_add(UINT32_MAX - 1, 1), UINT32_MAX);
    ck_assert_uint_eq(sat_add(2, 3), 5);
    FtSettings s;
    const Counters full{UINT32_MAX, UINT32_MAX, UINT32_MAX};
    Decision d = decide(s, full, Classification{Verdict::Preempted, "preempted", "preempt"});
    ck_assert_uint_eq(d.after.preemptions, UINT32_MAX);
    ck_assert(d.action == Action::Restart);  // max_preemptions 0 = unlimited
    s.max_preemptions = 5;
    d = decide(s, full, Classification{Verdict::Preempted, "preempted", "preempt"});
    ck_assert(d.action == Action::Fail);
    d = decide(s, full, Classification{Verdict::NodeFailure, "node", "node"});
    ck_assert_uint_eq(d.after.node_failures, UINT32_MAX);
    ck_assert(d.action == Action::Fail);
    d = decide(s, full, Classification{Verdict::Retryable, "exit code 137", "exit"});
    ck_assert_uint_eq(d.after.failures, UINT32_MAX);
    ck_assert(d.action == Action::Fail);
}
END_TEST

// The budget check adds failures and time-limit requeues: a saturated (forged, "w":4294967295)
// failure count plus one time-limit requeue must not wrap to 0 and buy unlimited restarts.
START_TEST(t_budget_sum_no_wrap) {
    FtSettings s;
    s.max_restarts = 3;
    s.requeue_at_time_limit = true;
    const Classification crash{Verdict::Retryable, "exit code 137", "exit"};
    const Classification limit{Verdict::TimeLimit, "time limit reached", "time"};
    Counters c{0, UINT32_MAX, 0, 1};
    ck_assert(decide(s, c, crash).action == Action::Fail);
    ck_assert(decide(s, c, limit).action == Action::Fail);
    c = Counters{0, UINT32_MAX - 1, 0, 2};
    ck_assert(decide(s, c, crash).action == Action::Fail);
    c = Counters{0, 0, 0, UINT32_MAX};
    Decision d = decide(s, c, limit);
    ck_assert(d.action == Action::Fail);
    ck_assert_uint_eq(d.after.time_limits, UINT32_MAX);
    s.max_restarts = UINT32_MAX;
    d = decide(s, Counters{0, 0, 0, UINT32_MAX}, limit);
    ck_assert(d.action == Action::Fail);
}
END_TEST

START_TEST(t_backoff) {
    const BackRow &r = back_rows[_i];
    FtSettings s;
    s.backoff_initial_s = r.initial;
    s.backoff_factor = r.factor;
    s.backoff_max_s = r.max;
    ck_assert_uint_eq(backoff_s(s, r.n), r.want);
}
END_TEST

START_TEST(t_backoff_grows) {
    FtSettings s;
    uint32_t prev = 0;
    for (uint32_t n = 1; n < 50; n++) {
        uint32_t d = backoff_s(s, n);
        ck_assert_uint_ge(d, prev);
        ck_assert_uint_le(d, s.backoff_max_s);
        prev = d;
    }
    ck_assert_uint_eq(prev, s.backoff_max_s);
}
END_TEST

struct HangRow {
    uint32_t timeout;
    Activity a;
    int64_t now;
    bool hung;
    int64_t silent;
};
const HangRow hang_rows[] = {
    {0, {100, 0, 0, false}, 100000, false, 99900},  // off
    {30, {100, 0, 0, false}, 129, false, 29},       // just started
    {30, {100, 0, 0, false}, 130, true, 30},        // silent since start
    {30, {100, 150, 0, false}, 179, false, 29},     // output keeps it alive
    {30, {100, 150, 0, false}, 185, true, 35},
    {30, {100, 0, 170, false}, 199, false, 29},     // slow but heartbeating: alive
    {30, {100, 110, 500, false}, 520, false, 20},   // heartbeat newer than output
    {30, {100, 0, 0, true}, 10000, false, 9900},    // saving: never hung
    {30, {100, 120, 0, false}, 110, false, 0},      // clock went back
};

START_TEST(t_hang) {
    const HangRow &r = hang_rows[_i];
    HangCheck h = hang_check(r.timeout, r.a, r.now);
    ck_assert_msg(h.hung == r.hung, "row %d: hung %d", _i, h.hung);
    ck_assert_int_eq(h.silent_s, r.silent);
    if (r.timeout && !r.hung && !r.a.saving) ck_assert_int_gt(h.next_check, r.now);
}
END_TEST

START_TEST(t_slow_heartbeating_never_hung) {
    Activity a{0, 0, 0, false};
    for (int64_t now = 0; now < 100000; now += 7) {
        if (now % 29 == 0) a.last_heartbeat = now;  // beats every 29*7 s = 203 s
        ck_assert(!hang_check(300, a, now).hung);
    }
}
END_TEST

struct HbRow {
    const char *text;
    bool ok;
    uint64_t step;
    int64_t t;
    bool saving;
};
const HbRow hb_rows[] = {
    {"12 1700000000 0\n", true, 12, 1700000000, false},
    {"0 5 1", true, 0, 5, true},
    {"12 1700000000 2", false, 0, 0, false},
    {"12 1700000000", false, 0, 0, false},
    {"-1 5 0", false, 0, 0, false},
    {"a b c", false, 0, 0, false},
    {"1 2 0 extra", false, 0, 0, false},
    {"", false, 0, 0, false},
};

START_TEST(t_heartbeat) {
    const HbRow &r = hb_rows[_i];
    Heartbeat h;
    ck_assert(parse_heartbeat(r.text, h) == r.ok);
    if (r.ok) {
        ck_assert_uint_eq(h.step, r.step);
        ck_assert_int_eq(h.time, r.t);
        ck_assert(h.saving == r.saving);
    }
}
END_TEST

}  // namespace

Suite *ft_suite_rules();
Suite *ft_suite_state();
Suite *ft_suite_judge();

Suite *ft_suite_rules() {
    Suite *s = suite_create("ft-rules");
    TCase *t = tcase_create("classify");
    tcase_add_loop_test(t, t_classify, 0, int(sizeof class_rows / sizeof class_rows[0]));
    suite_add_tcase(s, t);
    t = tcase_create("decide");
    tcase_add_loop_test(t, t_decide, 0, int(sizeof dec_rows / sizeof dec_rows[0]));
    suite_add_tcase(s, t);
    t = tcase_create("backoff");
    tcase_add_loop_test(t, t_backoff, 0, int(sizeof back_rows / sizeof back_rows[0]));
    tcase_add_test(t, t_backoff_grows);
    tcase_add_test(t, t_counters_saturate);
    tcase_add_test(t, t_budget_sum_no_wrap);
    suite_add_tcase(s, t);
    t = tcase_create("hang");
    tcase_add_loop_test(t, t_hang, 0, int(sizeof hang_rows / sizeof hang_rows[0]));
    tcase_add_test(t, t_slow_heartbeating_never_hung);
    tcase_add_loop_test(t, t_heartbeat, 0, int(sizeof hb_rows / sizeof hb_rows[0]));
    suite_add_tcase(s, t);
    return s;
}

int main() {
    SRunner *sr = srunner_create(ft_suite_rules());
    srunner_add_suite(sr, ft_suite_state());
    srunner_add_suite(sr, ft_suite_judge());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
