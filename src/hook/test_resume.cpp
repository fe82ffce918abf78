// Check suite: when the hook lifts Slurm's requeue hold of a preempted run (issue 14).
#include <cstdlib>
#include <string>

#include "hook/resume.hpp"

#include <check.h>  // last: it defines a fail() macro

using namespace idletime::hook;

namespace {

constexpr int kCred = 120;
constexpr int64_t kRequeue = 1000;

// A job as slurmctld shows it right after a requeue of run 3.
ResumeView requeued() {
    ResumeView v;
    v.pending = true;
    v.completing = true;
    v.restart_cnt = 3;
    v.submit_time = kRequeue;
    v.eligible_time = kRequeue + kCred + 1;
    return v;
}

Resume step(const ResumeView &v, int64_t now) {
    std::string why;
    Resume r = resume_step(v, 3, kCred, now, why);
    ck_assert(!why.empty());
    return r;
}

START_TEST(waits_while_completing) {
    // Some node of the old allocation has not reported its epilog: slurmd may still hold the
    // old run's steps and credential.
    ck_assert(step(requeued(), kRequeue + 30) == Resume::Wait);
    // Slurm sets the hold only once the job has left COMPLETING: before, the begin time shown is
    // the previous run's (in the past). Found by t-reclaim-resume's second round.
    ResumeView v = requeued();
    v.eligible_time = kRequeue - 500;
    v.submit_time = kRequeue - 500;
    ck_assert(step(v, kRequeue + 1) == Resume::Wait);
}
END_TEST

START_TEST(waits_out_the_revoke_second) {
    ResumeView v = requeued();
    v.completing = false;
    ck_assert(step(v, kRequeue) == Resume::Wait);
    ck_assert(step(v, kRequeue + 1) == Resume::Wait);
    ck_assert(step(v, kRequeue + kRevokeGap) == Resume::Release);
}
END_TEST

START_TEST(submit_time_plus_one) {
    // Slurm moves submit_time one second on when it equals the previous one.
    ResumeView v = requeued();
    v.completing = false;
    v.submit_time = kRequeue + 1;
    ck_assert(step(v, kRequeue + 5) == Resume::Release);
}
END_TEST

START_TEST(leaves_chosen_begin_times) {
    ResumeView v = requeued();
    v.completing = false;
    v.eligible_time = kRequeue + 3600;  // the user's --begin, or the ft backoff
    ck_assert(step(v, kRequeue + 5) == Resume::Leave);
    v.eligible_time = kRequeue + 30;
    ck_assert(step(v, kRequeue + 5) == Resume::Leave);
}
END_TEST

START_TEST(leaves_other_runs_and_states) {
    ResumeView v = requeued();
    v.completing = false;
    v.restart_cnt = 4;  // preempted again meanwhile: that run's hook decides
    ck_assert(step(v, kRequeue + 5) == Resume::Leave);
    v = requeued();
    v.pending = false;  // started (or cancelled)
    ck_assert(step(v, kRequeue + 5) == Resume::Leave);
    v = requeued();
    v.completing = false;
    ck_assert(step(v, v.eligible_time) == Resume::Leave);  // hold already over
}
END_TEST

}  // namespace

int main() {
    Suite *s = suite_create("hook-resume");
    TCase *t = tcase_create("resume");
    tcase_add_test(t, waits_while_completing);
    tcase_add_test(t, waits_out_the_revoke_second);
    tcase_add_test(t, submit_time_plus_one);
    tcase_add_test(t, leaves_chosen_begin_times);
    tcase_add_test(t, leaves_other_runs_and_states);
    suite_add_tcase(s, t);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
