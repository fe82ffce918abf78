// The C API as the plugins use it: load, keep the last good config, rank, site factor, no-config.
#include <climits>
#include <cstring>

#include "idletime/sched.h"
#include "sched_fixture.hpp"

namespace {

const int64_t NOW = 1700000000;

idletime_sched_job_t cjob(uint32_t id, const char *part, uint32_t gpus, int64_t start, const char *comment,
                          const char *account) {
    idletime_sched_job_t j;
    std::memset(&j, 0, sizeof(j));
    j.job_id = id;
    j.partition = part;
    j.priority_tier = std::strncmp(part, "quota-", 6) == 0 ? 10 : 1;
    j.preempt_off = std::strncmp(part, "quota-", 6) == 0;
    j.gpus = gpus;
    j.start_time = start;
    j.submit_time = start ? start - 1 : NOW - 10;
    j.comment = comment;
    j.account = account;
    return j;
}

START_TEST(load_keep_last_good) {
    idletime_sched_t *s = idletime_sched_new();
    char err[256] = "";
    ck_assert_int_eq(idletime_sched_has_config(s), 0);
    ck_assert_int_eq(idletime_sched_load(s, fx::srcpath("testsuite/sched/data/sched16.json").c_str(), "120", err,
                                         sizeof(err)),
                     0);
    ck_assert_int_eq(idletime_sched_min_run_time(s), 120);
    // broken file: error names the file and the problem; old config and min run time stay
    ck_assert_int_eq(idletime_sched_load(s, fx::srcpath("testsuite/sched/data/broken.json").c_str(), "5", err,
                                         sizeof(err)),
                     -1);
    ck_assert_msg(std::strstr(err, "broken.json: $."), "err: %s", err);
    ck_assert_int_eq(idletime_sched_min_run_time(s), 120);
    ck_assert_int_eq(idletime_sched_partitions_may_preempt(s, "quota-team-b", 10, "idle-p16", 1, 0), 1);
    ck_assert_int_eq(idletime_sched_partitions_may_preempt(s, "quota-team-a", 10, "idle-p16", 1, 0), 0);
    ck_assert_int_eq(idletime_sched_load(s, "/nonexistent/idletime.json", nullptr, err, sizeof(err)), -1);
    ck_assert_msg(std::strstr(err, "/nonexistent/idletime.json: cannot read"), "err: %s", err);
    ck_assert_int_eq(idletime_sched_has_config(s), 1);
    idletime_sched_free(s);
}
END_TEST

const char *bad_min_run[] = {"-1", "abc", "10s", "604801", "+5", " 5"};

START_TEST(bad_min_run_time) {
    idletime_sched_t *s = idletime_sched_new();
    char err[256] = "";
    ck_assert_int_eq(idletime_sched_load(s, fx::srcpath("testsuite/sched/data/sched16.json").c_str(),
                                         bad_min_run[_i], err, sizeof(err)),
                     -1);
    ck_assert_msg(std::strstr(err, "between 0 and 604800"), "err: %s", err);
    ck_assert_int_eq(idletime_sched_has_config(s), 0);
    idletime_sched_free(s);
}
END_TEST

START_TEST(preemptable_and_rank) {
    idletime_sched_t *s = fx::capi_cluster16();
    std::string c10 = "idletime:ckpt=" + std::to_string(NOW - 10), c300 = "idletime:ckpt=" + std::to_string(NOW - 300),
                c1200 = "idletime:ckpt=" + std::to_string(NOW - 1200);
    const auto owner = cjob(50, "quota-team-a", 4, 0, nullptr, "team-a");
    const idletime_sched_job_t v[] = {cjob(1, "idle-p12", 4, NOW - 3600, c1200.c_str(), "team-b"),
                                      cjob(2, "idle-p12", 4, NOW - 3600, c10.c_str(), "team-c"),
                                      cjob(3, "idle-p12", 4, NOW - 3600, c300.c_str(), "team-a"),
                                      cjob(4, "quota-team-a", 4, NOW - 3600, nullptr, "team-a"),
                                      cjob(5, "idle-p16", 4, NOW - 3600, nullptr, "team-b")};
    int allowed[5];
    for (int i = 0; i < 5; ++i) allowed[i] = idletime_sched_preemptable(s, &owner, &v[i], NOW);
    ck_assert_int_eq(allowed[0] + allowed[1] + allowed[2], 3);
    ck_assert_int_eq(allowed[3], 0);  // guaranteed
    ck_assert_int_eq(allowed[4], 0);  // other pool
    ck_assert_uint_eq(idletime_sched_victim_rank(s, 2), 0);
    ck_assert_uint_eq(idletime_sched_victim_rank(s, 3), 1);
    ck_assert_uint_eq(idletime_sched_victim_rank(s, 1), 2);
    ck_assert_uint_eq(idletime_sched_victim_rank(s, 4), UINT32_MAX);
    // idle-time jobs never preempt each other
    ck_assert_int_eq(idletime_sched_preemptable(s, &v[0], &v[1], NOW), 0);
    ck_assert_int_eq(idletime_ckpt_comment_time(c10.c_str(), NOW - 5, NOW), NOW);  // before start: invalid
    ck_assert_int_eq(idletime_ckpt_comment_time(c10.c_str(), NOW - 50, NOW), NOW - 10);
    ck_assert_int_eq(idletime_ckpt_comment_time(nullptr, NOW - 50, NOW), NOW);
    idletime_sched_free(s);
}
END_TEST

START_TEST(pass_wanted_for_a_new_owner) {
    // preempt/idletime asks Slurm for a scheduling pass at a guaranteed job's first candidate (its
    // submission's test), once; never for an idle-time preemptor or a job with no candidate.
    idletime_sched_t *s = fx::capi_cluster16();
    const auto owner = cjob(50, "quota-team-a", 1, 0, nullptr, "team-a");
    const auto other = cjob(51, "quota-team-a", 1, 0, nullptr, "team-a");
    const auto v1 = cjob(1, "idle-p12", 1, NOW - 3600, nullptr, "team-b");
    const auto v2 = cjob(2, "idle-p12", 1, NOW - 3600, nullptr, "team-c");
    const auto guaranteed = cjob(4, "quota-team-a", 1, NOW - 3600, nullptr, "team-a");
    ck_assert_int_eq(idletime_sched_pass_wanted(s, 0, NOW), 0);
    ck_assert_int_eq(idletime_sched_preemptable(s, &owner, &guaranteed, NOW), 0);
    ck_assert_int_eq(idletime_sched_pass_wanted(s, 0, NOW), 0);  // no candidate: nothing to reclaim
    ck_assert_int_eq(idletime_sched_preemptable(s, &owner, &v1, NOW), 1);
    ck_assert_int_eq(idletime_sched_pass_wanted(s, 0, NOW), 1);
    ck_assert_int_eq(idletime_sched_pass_wanted(s, 0, NOW), 0);  // handed out once
    ck_assert_int_eq(idletime_sched_preemptable(s, &owner, &v2, NOW), 1);
    ck_assert_int_eq(idletime_sched_pass_wanted(s, 0, NOW), 0);  // its second candidate
    ck_assert_int_eq(idletime_sched_preemptable(s, &owner, &v1, NOW + 1), 1);  // the pass itself
    ck_assert_int_eq(idletime_sched_pass_wanted(s, 0, NOW), 0);
    ck_assert_int_eq(idletime_sched_preemptable(s, &other, &v1, NOW + 1), 1);  // the next owner
    ck_assert_int_eq(idletime_sched_pass_wanted(s, 0, NOW), 1);
    ck_assert_int_eq(idletime_sched_preemptable(s, &v1, &v2, NOW + 1), 0);  // idle-time: never
    ck_assert_int_eq(idletime_sched_pass_wanted(s, 0, NOW), 0);
    ck_assert_int_eq(idletime_sched_pass_wanted(nullptr, 0, NOW), 0);
    idletime_sched_free(s);
}
END_TEST

START_TEST(site_factor_capi) {
    idletime_sched_t *s = idletime_sched_new();
    char err[256];
    uint32_t f = 7;
    auto pend = cjob(9, "idle-p16", 2, 0, nullptr, "team-b");
    ck_assert_int_eq(idletime_sched_site_factor(s, &pend, NOW, &f), 0);  // no config: untouched
    ck_assert_uint_eq(f, 7);
    ck_assert_int_eq(idletime_sched_load(s, fx::srcpath("testsuite/sched/data/sched16.json").c_str(), nullptr, err,
                                         sizeof(err)),
                     0);
    ck_assert_int_eq(idletime_sched_borrow_taken_at(s), -1);
    idletime_sched_borrow_reset(s, NOW);
    auto run = cjob(1, "idle-p16", 4, NOW - 100, nullptr, "team-b");
    idletime_sched_borrow_add(s, &run);
    ck_assert_int_eq(idletime_sched_borrow_taken_at(s), NOW);
    ck_assert_int_eq(idletime_sched_site_factor(s, &pend, NOW, &f), 1);
    ck_assert_uint_eq(f, 950u * 1000000 + 10);
    idletime_sched_free(s);
}
END_TEST

START_TEST(null_safety) {
    char err[64];
    ck_assert_int_eq(idletime_sched_load(nullptr, "x", nullptr, err, sizeof(err)), -1);
    ck_assert_int_eq(idletime_sched_preemptable(nullptr, nullptr, nullptr, 0), 0);
    ck_assert_uint_eq(idletime_sched_victim_rank(nullptr, 1), UINT32_MAX);
    ck_assert_int_eq(idletime_sched_has_config(nullptr), 0);
    idletime_sched_free(nullptr);
}
END_TEST

}  // namespace

// The SystemComment preempt/idletime writes for a victim: whole or not at all, never past buf.
START_TEST(victim_note_capi) {
    char buf[128];
    ck_assert_uint_eq(idletime_sched_victim_note(nullptr, 42, 1000, buf, sizeof buf), 38);
    ck_assert_str_eq(buf, "idletime: preempted at 1000 for job 42");
    ck_assert_uint_gt(idletime_sched_victim_note("bb: ok\nidletime: preempted at 9 for job 7", 42, 1000, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "bb: ok\nidletime: preempted at 1000 for job 42");
    char small[16] = "untouched";
    ck_assert_uint_eq(idletime_sched_victim_note(nullptr, 42, 1000, small, sizeof small), 0);
    ck_assert_str_eq(small, "untouched");
    ck_assert_uint_eq(idletime_sched_victim_note(nullptr, 0, 1000, buf, sizeof buf), 0);
    ck_assert_uint_eq(idletime_sched_victim_note(nullptr, 42, 1000, nullptr, 0), 0);
}
END_TEST

Suite *capi_suite() {
    Suite *s = suite_create("sched-capi");
    TCase *t = tcase_create("capi");
    tcase_add_test(t, load_keep_last_good);
    tcase_add_loop_test(t, bad_min_run_time, 0, sizeof(bad_min_run) / sizeof(bad_min_run[0]));
    tcase_add_test(t, preemptable_and_rank);
    tcase_add_test(t, pass_wanted_for_a_new_owner);
    tcase_add_test(t, site_factor_capi);
    tcase_add_test(t, null_safety);
    tcase_add_test(t, victim_note_capi);
    suite_add_tcase(s, t);
    return s;
}
