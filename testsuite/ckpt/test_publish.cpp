// When libidletime-ckpt publishes a checkpoint time to Slurm (src/ckpt/publish.cpp): only inside
// the job, not when switched off, not in a run spank_idletime marked not preemptible.
#include "ckpt/publish.hpp"

#include <slurm/slurm.h>

#include <cstdlib>
// check.h defines fail(): include it after the standard headers.
#include <check.h>

using idletime::ckpt::claim_useful;
using idletime::ckpt::publish_target;

START_TEST(publishes_inside_the_job)
{
    ck_assert_uint_eq(publish_target("42", "42", nullptr, nullptr), 42);
    ck_assert_uint_eq(publish_target("42", "42", "1", "1"), 42);
}
END_TEST

START_TEST(not_outside_or_off)
{
    ck_assert_uint_eq(publish_target("42", nullptr, nullptr, nullptr), 0);
    ck_assert_uint_eq(publish_target("42", "43", nullptr, nullptr), 0);
    ck_assert_uint_eq(publish_target("42", "42", "0", nullptr), 0);
    ck_assert_uint_eq(publish_target("4x", "4x", nullptr, nullptr), 0);
}
END_TEST

// A guaranteed run (quota partition) is never a victim: no RPCs to slurmctld for it. Before the
// replay investigation of issue 16 every guaranteed job's checkpoint cost slurmctld two RPCs.
START_TEST(not_in_a_guaranteed_run)
{
    ck_assert_uint_eq(publish_target("42", "42", nullptr, "0"), 0);
}
END_TEST

// The save on a preemption notice: the run is over, so no Comment update (one write fewer under
// slurmctld's job lock per victim while the owners wait; issue 14). A time-limit warning or a
// periodic save still publishes. Before, every save of a preempted run updated the Comment.
START_TEST(no_claim_once_preempted)
{
    ck_assert(claim_useful(JOB_RUNNING, 0));
    ck_assert(!claim_useful(JOB_RUNNING, 1700000000));
    ck_assert(!claim_useful(JOB_RUNNING | JOB_REQUEUE, 1700000000));
    // Not running any more: the update fails or changes a record nobody ranks; keep Slurm's answer.
    ck_assert(claim_useful(JOB_PENDING, 1700000000));
}
END_TEST

int main()
{
    Suite *s = suite_create("ckpt-publish");
    TCase *t = tcase_create("target");
    tcase_add_test(t, publishes_inside_the_job);
    tcase_add_test(t, not_outside_or_off);
    tcase_add_test(t, not_in_a_guaranteed_run);
    tcase_add_test(t, no_claim_once_preempted);
    suite_add_tcase(s, t);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
