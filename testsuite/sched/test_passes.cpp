// Scheduling passes asked for new guaranteed jobs (PassRequests; the C API is in test_capi.cpp).
#include "sched_fixture.hpp"

using idletime::sched::PassRequests;

namespace {

const int64_t NOW = 1700000000;

START_TEST(pass_once_per_submission) {
    PassRequests p;
    ck_assert(p.first(7, NOW - 1, NOW));
    ck_assert(!p.first(7, NOW - 1, NOW));       // the same submission, same second
    ck_assert(!p.first(7, NOW - 1, NOW + 30));  // the main pass that looks at it again
    ck_assert(p.first(8, NOW, NOW));            // another job
    ck_assert(p.first(7, NOW + 40, NOW + 41));  // requeued: a new submit time asks again
    ck_assert(!p.first(7, NOW + 40, NOW + 42));
    // Forgotten after kForget s: a job still pending then may ask once more (one pass per 10 min).
    ck_assert(p.first(7, NOW + 40, NOW + 41 + PassRequests::kForget));
    ck_assert_uint_eq(p.size(), 2);
}
END_TEST

START_TEST(pass_requests_bounded) {
    // Submissions (or --test-only calls, which Slurm tests the same way) for over an hour at the
    // highest rate granted: the table never holds more than kMax jobs, old entries make room.
    PassRequests p;
    const uint32_t per = PassRequests::kPerSecond, n = 2 * PassRequests::kMax;
    uint32_t granted = 0;
    for (uint32_t id = 1; id <= n; ++id) {
        granted += p.first(id, NOW, NOW + (id - 1) / per) ? 1 : 0;
        ck_assert_uint_le(p.size(), PassRequests::kMax);
    }
    ck_assert_uint_eq(granted, n);
    ck_assert(!p.first(n, NOW, NOW + (n - 1) / per + 1));  // still remembered
}
END_TEST

START_TEST(pass_requests_rate) {
    // A flood of guaranteed submissions in one second asks for kPerSecond passes, not one each:
    // the rest wait for Slurm's loop (at most 1 s), and are not remembered (a later look may ask).
    PassRequests p;
    uint32_t granted = 0;
    for (uint32_t id = 1; id <= 100; ++id) granted += p.first(id, NOW, NOW) ? 1 : 0;
    ck_assert_uint_eq(granted, PassRequests::kPerSecond);
    ck_assert_uint_eq(p.size(), PassRequests::kPerSecond);
    ck_assert(p.first(100, NOW, NOW + 1));  // the next second: one that was refused asks again
    ck_assert(!p.first(1, NOW, NOW + 1));   // one that was granted does not
}
END_TEST

START_TEST(pass_requests_gap) {
    // SchedulerParameters=batch_sched_delay=3: one request per 3 s, as Slurm spaces its own.
    PassRequests p;
    ck_assert(p.first(1, NOW, NOW, 3));
    ck_assert(!p.first(2, NOW, NOW, 3));
    ck_assert(!p.first(2, NOW, NOW + 2, 3));
    ck_assert(p.first(2, NOW, NOW + 3, 3));
    ck_assert(!p.first(3, NOW, NOW + 3, 3));
    ck_assert(p.first(3, NOW, NOW + 2, 0));  // a clock stepped back never blocks for good
}
END_TEST

}  // namespace

Suite *passes_suite() {
    Suite *s = suite_create("sched-passes");
    TCase *t = tcase_create("passes");
    tcase_add_test(t, pass_once_per_submission);
    tcase_add_test(t, pass_requests_bounded);
    tcase_add_test(t, pass_requests_rate);
    tcase_add_test(t, pass_requests_gap);
    suite_add_tcase(s, t);
    return s;
}
