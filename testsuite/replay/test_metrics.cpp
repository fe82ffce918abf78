// Metrics and invariants from synthetic event logs with hand-computed answers.
#include "replay/metrics.hpp"
// check.h defines fail(): include it after the standard headers.
#include "suites.hpp"

using namespace idletime::replay;

namespace {

JobRecord rec(const char *id, JobClass cls, const char *quota, int gpus, double submit,
              std::vector<JobRun> runs)
{
    JobRecord r;
    r.job = {id, submit, 10, gpus, cls, quota, "a100", "a100"};
    r.submitted = true;
    r.completed = !runs.empty() && !runs.back().preempted;
    r.runs = std::move(runs);
    return r;
}

JobRun run(double a, double b, bool in_quota, bool preempted = false, double notice = -1,
           double done = 0, double kept = 0)
{
    return {a, b, in_quota ? "quota-x" : "idle-a100", in_quota, preempted, notice, done, kept};
}

// Pool of 4 GPUs, quotas q0=2 q1=2. G1 runs in q0; I1 borrows q1's share until G2 (q1)
// arrives at 14, gets the notice at 15, is released at 20 (kept 18 of 20 s of work),
// G2 starts at 21, I1 reruns 30..40.
EventLog reclaim_log()
{
    EventLog log;
    log.quotas = {{"q0", "a100", 2, 2}, {"q1", "a100", 2, 2}};
    log.pool_capacity = {{"a100", 4}};
    log.span_s = 40;
    log.jobs.push_back(rec("G1", JobClass::Guaranteed, "q0", 2, 0, {run(0, 10, true)}));
    log.jobs.push_back(rec("I1", JobClass::Idle, "q1", 2, 0,
                           {run(0, 20, false, true, 15, 20, 18), run(30, 40, false)}));
    log.jobs.push_back(rec("G2", JobClass::Guaranteed, "q1", 2, 14, {run(21, 31, true)}));
    log.samples.push_back({5, {{"q0", 2}}, {{"a100", 4}}});
    log.samples.push_back({25, {{"q1", 2}}, {{"a100", 2}}});
    return log;
}

}  // namespace

START_TEST(test_reclaim_metrics)
{
    Metrics m = compute_metrics(reclaim_log(), 10);
    ck_assert_int_eq(m.guaranteed_wait.n, 2);
    ck_assert_double_eq_tol(m.guaranteed_wait.p50, 0, 1e-9);
    ck_assert_double_eq_tol(m.guaranteed_wait.max, 7, 1e-9);
    // G1 found free GPUs; G2 waited while I1 got its notice at 15.
    ck_assert_int_eq(m.guaranteed_wait_free.n, 1);
    ck_assert_double_eq_tol(m.guaranteed_wait_free.max, 0, 1e-9);
    ck_assert_int_eq(m.guaranteed_wait_reclaim.n, 1);
    ck_assert_double_eq_tol(m.guaranteed_wait_reclaim.max, 7, 1e-9);
    ck_assert_int_eq(m.preemptions, 1);
    ck_assert_int_eq(m.reclaims, 1);
    ck_assert_double_eq_tol(m.victims_per_reclaim.mean, 1, 1e-9);
    ck_assert_double_eq_tol(m.owner_wait.max, 5, 1e-9);
    ck_assert_double_eq_tol(m.owner_start.max, 6, 1e-9);
    ck_assert_double_eq_tol(m.gpu_s_lost, 4, 1e-9);
    ck_assert_int_eq(m.idle_jobs, 1);
    ck_assert_int_eq(m.idle_completed, 1);
    ck_assert_double_eq_tol(m.idle_turnaround.max, 40, 1e-9);
    // 20 + 40 + 20 + 20 GPU-s over 4 GPUs x 40 s.
    ck_assert_double_eq_tol(m.alloc_rate_window, 100.0 / 160.0, 1e-9);
    ck_assert_double_eq_tol(m.makespan_s, 40, 1e-9);
    ck_assert_uint_eq(m.alloc_series.size(), 4);
    ck_assert_double_eq_tol(m.alloc_series[0].second, 1.0, 1e-9);   // 0..10: G1 + I1
    ck_assert_double_eq_tol(m.alloc_series[2].second, 0.45, 1e-9);  // 20..30: G2 from 21
    ck_assert(check_invariants(reclaim_log()).empty());
}
END_TEST

struct GroupCase {
    std::vector<double> notices;  // victims' notice times, 1 GPU each, released 3 s later
    int reclaims;
    double max_victims;
};

const GroupCase kGroups[] = {
    {{10, 11}, 1, 2},
    {{10, 15}, 2, 1},
    {{10, 11.5, 12, 30}, 2, 3},
    {{}, 0, 0},
};

START_TEST(test_reclaim_grouping)
{
    const GroupCase &c = kGroups[_i];
    EventLog log;
    log.pool_capacity = {{"a100", 8}};
    log.span_s = 50;
    int k = 0;
    for (double t : c.notices) {
        std::string id = "v" + std::to_string(k++);
        log.jobs.push_back(rec(id.c_str(), JobClass::Idle, "q", 1, 0,
                               {run(0, t + 3, false, true, t, t + 3, 0), run(t + 10, t + 20, false)}));
    }
    Metrics m = compute_metrics(log);
    ck_assert_int_eq(m.reclaims, c.reclaims);
    ck_assert_double_eq_tol(m.victims_per_reclaim.max, c.max_victims, 1e-9);
    double lost = 0;
    for (double t : c.notices)
        lost += t + 3;
    ck_assert_double_eq_tol(m.gpu_s_lost, lost, 1e-9);
}
END_TEST

struct InvCase {
    void (*edit)(EventLog &);
    const char *expect;
};

const InvCase kInv[] = {
    {[](EventLog &l) { l.samples.push_back({7, {{"q0", 3}}, {}}); },
     "at t=7.000000 s quota q0 used 3 GPUs, above its quota of 2"},
    {[](EventLog &l) { l.jobs[1].runs.pop_back(); l.jobs[1].completed = false; },
     "preempted job I1 did not complete"},
    {[](EventLog &l) { l.jobs[0].submitted = false; }, "job G1 was never submitted"},
    {[](EventLog &l) { l.jobs[2].runs[0].preempted = true; },
     "job G2 was preempted while running in quota (quota-x)"},
};

START_TEST(test_invariants)
{
    EventLog log = reclaim_log();
    kInv[_i].edit(log);
    auto bad = check_invariants(log);
    ck_assert_uint_ge(bad.size(), 1);
    ck_assert_str_eq(bad[0].c_str(), kInv[_i].expect);
}
END_TEST

struct DistCase {
    std::vector<double> v;
    double p50, p95, max;
};

const DistCase kDist[] = {
    {{}, 0, 0, 0},
    {{5}, 5, 5, 5},
    {{1, 2, 3, 4}, 2, 4, 4},
    {{10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, 10, 19, 20},
};

START_TEST(test_distribution)
{
    Dist d = distribution(kDist[_i].v);
    ck_assert_int_eq(d.n, int(kDist[_i].v.size()));
    ck_assert_double_eq_tol(d.p50, kDist[_i].p50, 1e-9);
    ck_assert_double_eq_tol(d.p95, kDist[_i].p95, 1e-9);
    ck_assert_double_eq_tol(d.max, kDist[_i].max, 1e-9);
}
END_TEST

// A guaranteed job submitted while a reclaim is under way (notice at 15, victim released at 20)
// counts as waiting for a reclaim although the notice came before its submission; one submitted
// after the release does not.
START_TEST(test_wait_split_overlap)
{
    EventLog log = reclaim_log();
    log.jobs.push_back(rec("G3", JobClass::Guaranteed, "q1", 1, 16, {run(21, 31, true)}));
    log.jobs.push_back(rec("G4", JobClass::Guaranteed, "q0", 1, 25, {run(26, 30, true)}));
    Metrics m = compute_metrics(log, 10);
    ck_assert_int_eq(m.guaranteed_wait_reclaim.n, 2);  // G2, G3
    ck_assert_double_eq_tol(m.guaranteed_wait_reclaim.max, 7, 1e-9);
    ck_assert_int_eq(m.guaranteed_wait_free.n, 2);  // G1, G4
    ck_assert_double_eq_tol(m.guaranteed_wait_free.max, 1, 1e-9);
}
END_TEST

Suite *metrics_suite()
{
    Suite *s = suite_create("metrics");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_reclaim_metrics);
    tcase_add_test(tc, test_wait_split_overlap);
    tcase_add_loop_test(tc, test_reclaim_grouping, 0, sizeof kGroups / sizeof kGroups[0]);
    tcase_add_loop_test(tc, test_invariants, 0, sizeof kInv / sizeof kInv[0]);
    tcase_add_loop_test(tc, test_distribution, 0, sizeof kDist / sizeof kDist[0]);
    suite_add_tcase(s, tc);
    return s;
}
