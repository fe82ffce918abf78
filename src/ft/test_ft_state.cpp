// Check suite: durable state, agent report, settings validation and per-job overrides.
#include <check.h>

#include <string>

#include "ft/ft.hpp"

using namespace idletime;
using namespace idletime::ft;

namespace {

START_TEST(t_state_roundtrip) {
    JobState st;
    FtSettings s;
    Counters c{2, 1};
    Classification cl{Verdict::Retryable, "exit code 137 (SIGKILL)", "exit"};
    for (uint32_t run = 0; run < 12; run++) {
        Decision d = decide(s, c, cl);
        state_record(st, run, 1699990000 + run, cl, d, 1700000000 + run);
        c = d.after;
    }
    st.pending = "requeue";
    st.begin_at = 1700000100;
    std::string text = state_serialize(st);
    ck_assert(text.rfind(kStatePrefix, 0) == 0);
    ck_assert_uint_lt(text.size(), 1536);
    JobState back;
    std::string err;
    ck_assert_msg(state_parse(text, back, err), "%s", err.c_str());
    ck_assert_uint_eq(back.counters.preemptions, 2);
    ck_assert_uint_eq(back.counters.failures, 3);
    ck_assert_int_eq(back.judged_start, 1699990011);
    ck_assert_str_eq(back.pending.c_str(), "requeue");
    ck_assert_int_eq(back.begin_at, 1700000100);
    ck_assert_uint_eq(back.history.size(), kMaxHistory);
    ck_assert_uint_eq(back.history.back().run, 11);
    ck_assert_str_eq(back.history.back().action.c_str(), "fail");
    ck_assert_str_eq(back.final_reason.c_str(),
                     "max restarts exceeded (last cause: exit code 137 (SIGKILL))");
    const std::string again = state_serialize(back);
    ck_assert_str_eq(again.c_str(), text.c_str());
}
END_TEST

// The requested mode (stamped by job_submit), time-limit requeues and who preempted a run.
START_TEST(t_state_mode_timelimit_preemptor) {
    JobState st;
    std::string err;
    ck_assert_msg(state_parse("idletime-ft:{\"v\":1,\"m\":\"acceptable\"}", st, err), "%s", err.c_str());
    ck_assert_str_eq(st.mode.c_str(), "acceptable");
    ck_assert_int_eq(st.judged_start, -1);
    FtSettings s;
    s.requeue_at_time_limit = true;
    Classification tl{Verdict::TimeLimit, "time limit reached", "timeout"};
    Decision d = decide(s, st.counters, tl);
    ck_assert_int_eq(int(d.action), int(Action::Restart));
    state_record(st, 0, 100, tl, d, 200);
    Classification pre{Verdict::Preempted, "preempted", "preempt"};
    state_record(st, 1, 300, pre, decide(s, st.counters, pre), 400);
    st.history.back().by = 4242;
    st.history.back().quota = "team-a";
    JobState back;
    ck_assert_msg(state_parse(state_serialize(st), back, err), "%s", err.c_str());
    ck_assert_str_eq(back.mode.c_str(), "acceptable");
    ck_assert_uint_eq(back.counters.time_limits, 1);
    ck_assert_uint_eq(back.counters.preemptions, 1);
    ck_assert_uint_eq(back.history.back().by, 4242);
    ck_assert_str_eq(back.history.back().quota.c_str(), "team-a");
    // Time-limit requeues share the failure budget.
    s.max_restarts = 1;
    ck_assert_int_eq(int(decide(s, back.counters, tl).action), int(Action::Fail));
    Classification ex{Verdict::Retryable, "exit code 137", "exit"};
    ck_assert_int_eq(int(decide(s, back.counters, ex).action), int(Action::Fail));
    s.requeue_at_time_limit = false;
    s.max_restarts = 5;
    ck_assert_int_eq(int(decide(s, Counters{}, tl).action), int(Action::Fail));
}
END_TEST

START_TEST(t_state_long_reason_cut) {
    JobState st;
    std::string lng(5000, 'x');
    lng += "\xc3\xa9";  // multi-byte tail must not be split
    Classification cl{Verdict::Permanent, lng, "msg"};
    Decision d{Action::Fail, 0, "permanent failure: " + lng, {}};
    state_record(st, 0, 1, cl, d, 1);
    std::string text = state_serialize(st);
    ck_assert_uint_lt(text.size(), 600);
    JobState back;
    std::string err;
    ck_assert(state_parse(text, back, err));
    ck_assert_uint_eq(back.history[0].reason.size(), kMaxReason);
}
END_TEST

const char *garbage[] = {
    "hello",
    "idletime-ft:",
    "idletime-ft:{",
    "idletime-ft:[1,2]",
    "idletime-ft:{\"p\":\"two\"}",
    "idletime-ft:{\"p\":-1}",
    "idletime-ft:{\"f\":99999999999}",
    "idletime-ft:{\"h\":5}",
    "idletime-ft:{\"h\":[1]}",
    "idletime-ft:{\"h\":[{\"r\":\"a\"}]}",
    "idletime-ft:{\"q\":3}",
    "idletime-ft:{} trailing",
    "idletime-ft:[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
    "idletime-ft:{\"p\":1,\"p\":\"x\"}",
    "idletime-ft:\xff\xfe",
};

START_TEST(t_state_garbage) {
    JobState st;
    st.counters.failures = 7;
    std::string err;
    ck_assert_msg(!state_parse(garbage[_i], st, err), "row %d accepted", _i);
    ck_assert_msg(!err.empty(), "row %d: no reason", _i);
    ck_assert_uint_eq(st.counters.failures, 0);  // treated as empty
    ck_assert_int_eq(st.judged_start, -1);
}
END_TEST

START_TEST(t_state_empty) {
    JobState st;
    std::string err;
    ck_assert(state_parse("", st, err));
    ck_assert_int_eq(st.judged_start, -1);
    ck_assert(state_parse("idletime-ft:{}", st, err));
    ck_assert_uint_eq(st.counters.preemptions, 0);
}
END_TEST

START_TEST(t_report_roundtrip) {
    AgentReport r;
    r.run = 3;
    r.hung = true;
    r.silent_s = 41;
    r.exit_code = 124;
    r.worker_restarts = 2;
    r.lines = {"NCCL error: unhandled system error", std::string(1000, 'y'), "a", "b", "c"};
    r.overrides = {{"max_restarts", "1"}, {"ft_policy", "exit-code"}};
    std::string text = report_serialize(r);
    ck_assert(text.rfind(kReportPrefix, 0) == 0);
    AgentReport b;
    std::string err;
    ck_assert_msg(report_parse(text, b, err), "%s", err.c_str());
    ck_assert_uint_eq(b.run, 3);
    ck_assert(b.hung);
    ck_assert_uint_eq(b.silent_s, 41);
    ck_assert_int_eq(b.exit_code, 124);
    ck_assert_uint_eq(b.worker_restarts, 2);
    ck_assert_uint_eq(b.lines.size(), kMaxLines);
    ck_assert_uint_eq(b.lines[1].size(), kMaxLine);
    ck_assert_str_eq(b.overrides["ft_policy"].c_str(), "exit-code");
    AgentReport quiet;
    text = report_serialize(quiet);
    ck_assert(report_parse(text, b, err));
    ck_assert(!b.hung);
}
END_TEST

const char *bad_reports[] = {
    "", "user comment", "idletime-run:{\"x\":300}", "idletime-run:{\"l\":[1]}",
    "idletime-run:{\"s\":{\"max_restarts\":5}}", "idletime-run:{\"r\":-4}", "idletime-run:nul",
};

START_TEST(t_report_garbage) {
    AgentReport b;
    std::string err;
    ck_assert_msg(!report_parse(bad_reports[_i], b, err), "row %d accepted", _i);
    ck_assert(!err.empty());
}
END_TEST

struct ValRow {
    void (*edit)(FtSettings &);
    const char *err_part;  // nullptr = valid
};
const ValRow val_rows[] = {
    {[](FtSettings &) {}, nullptr},
    {[](FtSettings &s) { s.retryable_patterns.push_back("NCCL (error"); },
     "retryable_patterns[6]: invalid regular expression \"NCCL (error\""},
    {[](FtSettings &s) { s.permanent_patterns = {"[oom"}; }, "permanent_patterns[0]"},
    {[](FtSettings &s) { s.permanent_patterns = {""}; }, "(empty)"},
    {[](FtSettings &s) { s.retryable_exit_codes.push_back(0); }, "exit code 0 is out of range"},
    {[](FtSettings &s) { s.permanent_exit_codes.push_back(256); }, "256 is out of range"},
    {[](FtSettings &s) { s.permanent_exit_codes.push_back(137); }, "both retryable and permanent"},
    {[](FtSettings &s) { s.backoff_factor = 0.5; }, "backoff_factor"},
    {[](FtSettings &s) { s.backoff_max_s = 1; }, "backoff_max: 1 is below"},
    {[](FtSettings &s) { s.retryable_patterns = {"(a+)+b", "x{2,3}"}; }, nullptr},
};

START_TEST(t_validate) {
    const ValRow &r = val_rows[_i];
    FtSettings s;
    r.edit(s);
    std::string err;
    bool ok = ft_validate(s, err);
    if (!r.err_part) {
        ck_assert_msg(ok, "row %d: %s", _i, err.c_str());
        return;
    }
    ck_assert_msg(!ok, "row %d accepted", _i);
    ck_assert_msg(err.find(r.err_part) != std::string::npos, "row %d: %s", _i, err.c_str());
    ck_assert(err.find('\n') == std::string::npos);
}
END_TEST

struct OvRow {
    const char *key, *val;
    bool ok;
};
const OvRow ov_rows[] = {
    {"max_restarts", "5", true},   {"max_restarts", "-1", false}, {"max_restarts", "", false},
    {"max_restarts", "1e3", false}, {"max_restarts", "99999999", false},
    {"ft_policy", "exit-code-and-error-msg", true}, {"ft_policy", "always", false},
    {"run_type", "async", true},   {"run_type", "both", false},  {"hang_timeout", "0", true},
    {"hang_timeout", "30s", false}, {"colour", "red", false},
};

START_TEST(t_overrides) {
    const OvRow &r = ov_rows[_i];
    FtSettings s;
    std::string err;
    bool ok = apply_overrides(s, {{r.key, r.val}}, err);
    ck_assert_msg(ok == r.ok, "row %d: %s", _i, err.c_str());
    if (!ok) {
        ck_assert(err.find(r.key) != std::string::npos);
        ck_assert(err.find("allowed") != std::string::npos);
        ck_assert_uint_eq(s.max_restarts, 3);  // untouched
    }
}
END_TEST

START_TEST(t_overrides_apply) {
    FtSettings s;
    std::string err;
    ck_assert(apply_overrides(s, {{"max_restarts", "1"}, {"ft_policy", "none"},
                                  {"hang_timeout", "30"}, {"run_type", "async"},
                                  {"max_preemptions", "4"}}, err));
    ck_assert_uint_eq(s.max_restarts, 1);
    ck_assert(s.policy == FtPolicy::None);
    ck_assert_uint_eq(s.hang_timeout_s, 30);
    ck_assert(s.run_type == RunType::Async);
    ck_assert_uint_eq(s.max_preemptions, 4);
}
END_TEST

}  // namespace

Suite *ft_suite_state();

Suite *ft_suite_state() {
    Suite *s = suite_create("ft-state");
    TCase *t = tcase_create("state");
    tcase_add_test(t, t_state_roundtrip);
    tcase_add_test(t, t_state_mode_timelimit_preemptor);
    tcase_add_test(t, t_state_long_reason_cut);
    tcase_add_test(t, t_state_empty);
    tcase_add_loop_test(t, t_state_garbage, 0, int(sizeof garbage / sizeof garbage[0]));
    tcase_add_test(t, t_report_roundtrip);
    tcase_add_loop_test(t, t_report_garbage, 0, int(sizeof bad_reports / sizeof bad_reports[0]));
    suite_add_tcase(s, t);
    t = tcase_create("settings");
    tcase_add_loop_test(t, t_validate, 0, int(sizeof val_rows / sizeof val_rows[0]));
    tcase_add_loop_test(t, t_overrides, 0, int(sizeof ov_rows / sizeof ov_rows[0]));
    tcase_add_test(t, t_overrides_apply);
    suite_add_tcase(s, t);
    return s;
}
