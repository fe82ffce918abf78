// Metrics text of idletime-exporter: quota series equal the accounting, job and history series,
// histograms cumulative, label escaping, no numbers when slurmctld did not answer.

#include "ft/ft.hpp"
#include "views/accounting.hpp"
#include "views/metrics.hpp"
#include "views_fixture.hpp"

using namespace idletime;
using namespace idletime::views;

namespace {

const std::vector<std::string> kEast{"idle-a100-east", "idle-a100-west"};

JobInfo job(uint32_t id, const char *account, std::vector<std::string> parts, SlurmState st, uint32_t gpus) {
    JobInfo j;
    j.job_id = id;
    j.account = account;
    j.partitions = std::move(parts);
    j.state = st;
    j.gpus = gpus;
    j.cpus = gpus;
    if (st == SlurmState::Running) j.nodes = "x";
    return j;
}

// A preempted-and-resumed idle-time job (reclaimed by team-a's job 7) and its preemptor.
std::vector<JobInfo> scenario() {
    std::vector<JobInfo> jobs;
    jobs.push_back(job(7, "team-a", {"quota-team-a"}, SlurmState::Running, 4));
    jobs.back().submit_time = 1000;
    jobs.back().start_time = 1003;  // owner waited 3 s
    JobInfo v = job(8, "team-b", kEast, SlurmState::Running, 2);
    ft::JobState st;
    st.mode = "only";
    st.counters.preemptions = 1;
    st.history.push_back(ft::RunRecord{0, "exit", "exit code 1", "complete", 900, 0, 0, ""});
    st.history.push_back(ft::RunRecord{0, "preempt", "preempted", "restart", 1004, 990, 7, "team-a"});
    v.admin_comment = ft::state_serialize(st);
    v.restart_cnt = 1;
    v.start_time = 1134;           // resumed 130 s after the judged preemption
    v.comment = "idletime:ckpt=1190";
    jobs.push_back(v);
    jobs.push_back(job(9, "team-b", kEast, SlurmState::Pending, 1));
    return jobs;
}

std::string text(const std::vector<JobInfo> &jobs, bool up = true) {
    static Catalog cat(example_config());
    std::vector<JobView> views;
    for (const JobInfo &j : jobs) views.push_back(derive(cat, j, 1200, true));
    ScrapeInfo info;
    info.slurm_up = up;
    info.version = "t";
    return metrics_text(account(example_config(), views), views, 1200, info);
}

void has(const std::string &out, const std::string &line) {
    ck_assert_msg(out.find("\n" + line + "\n") != std::string::npos, "missing line: %s", line.c_str());
}

}  // namespace

START_TEST(test_quota_series_equal_accounting) {
    std::string out = text(scenario());
    has(out, "idletime_quota_used_gpus{tenant=\"acme\",pool=\"a100-east\",quota=\"team-a\"} 4");
    has(out, "idletime_quota_borrowed_gpus{tenant=\"acme\",pool=\"a100-east\",quota=\"team-b\"} 2");
    has(out, "idletime_quota_pending_gpus{tenant=\"acme\",pool=\"a100-east\",quota=\"team-b\"} 1");
    has(out, "idletime_quota_guaranteed_gpus{tenant=\"acme\",pool=\"a100-east\",quota=\"team-a\"} 4");
    has(out, "idletime_quota_idle_running_jobs{tenant=\"acme\",pool=\"a100-east\",quota=\"team-b\"} 1");
    has(out, "idletime_pool_idle_used_gpus{tenant=\"acme\",pool=\"a100-east\"} 2");
    has(out, "idletime_tenant_borrowed_gpus{tenant=\"acme\"} 2");
    has(out, "# TYPE idletime_quota_lent_gpus gauge");
    has(out, "idletime_up 1");
}
END_TEST

START_TEST(test_jobs_and_history) {
    std::string out = text(scenario());
    has(out, "idletime_idle_jobs{quota=\"team-b\",state=\"running\"} 1");
    has(out, "idletime_idle_jobs{quota=\"team-b\",state=\"pending\"} 1");
    has(out, "idletime_idle_jobs{quota=\"team-a\",state=\"running\"} 0");
    has(out, "idletime_job_preemptions{quota=\"team-b\"} 1");
    has(out, "idletime_recorded_preemptions{quota=\"team-b\",reclaimed_by=\"team-a\"} 1");
    has(out, "idletime_recorded_restarts{quota=\"team-b\",cause=\"preemption\"} 1");
    ck_assert(out.find("cause=\"exit_code\"") == std::string::npos);  // action complete: no restart
    has(out, "idletime_resume_wait_seconds_bucket{le=\"120\"} 0");
    has(out, "idletime_resume_wait_seconds_bucket{le=\"300\"} 1");
    has(out, "idletime_resume_wait_seconds_sum 130");
    has(out, "idletime_owner_wait_seconds_bucket{le=\"5\"} 1");
    has(out, "idletime_owner_wait_seconds_count 1");
    has(out, "idletime_work_lost_seconds_sum 14");
    has(out, "idletime_checkpoint_age_seconds_sum 10");
    has(out, "idletime_checkpoint_age_seconds_bucket{le=\"+Inf\"} 1");
}
END_TEST

START_TEST(test_slurm_down_no_numbers) {
    std::string out = text({}, false);
    has(out, "idletime_up 0");
    ck_assert(out.find("idletime_quota_") == std::string::npos);
}
END_TEST

START_TEST(test_escape_and_causes) {
    const std::string escaped = label_escape("a\"b\\c\nd");
    ck_assert_str_eq(escaped.c_str(), "a\\\"b\\\\c\\nd");
    ck_assert_str_eq(restart_cause("sig"), "exit_code");
    ck_assert_str_eq(restart_cause("msg"), "error_message");
    ck_assert_str_eq(restart_cause("hung"), "hang");
    ck_assert_str_eq(restart_cause("node"), "node");
    ck_assert_str_eq(restart_cause("ok"), "");
    Histogram h;
    h.observe(1);
    h.observe(1e9);
    ck_assert_uint_eq(h.counts[0], 1);
    ck_assert_uint_eq(h.counts.back(), 1);
}
END_TEST

Suite *make_suite() {
    Suite *s = suite_create("views_metrics");
    TCase *tc = tcase_create("metrics");
    tcase_add_test(tc, test_quota_series_equal_accounting);
    tcase_add_test(tc, test_jobs_and_history);
    tcase_add_test(tc, test_slurm_down_no_numbers);
    tcase_add_test(tc, test_escape_and_causes);
    suite_add_tcase(s, tc);
    return s;
}

VIEWS_CHECK_MAIN
