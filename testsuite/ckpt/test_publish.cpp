// When libidletime-ckpt publishes a checkpoint time to Slurm (src/ckpt/publish.cpp): only inside
// the job, not when switched off, not in a run spank_idletime marked not preemptible.
#include "ckpt/publish.hpp"

#include <cstdlib>
// check.h defines fail(): include it after the standard headers.
#include <check.h>

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

int main()
{
    Suite *s = suite_create("ckpt-publish");
    TCase *t = tcase_create("target");
    tcase_add_test(t, publishes_inside_the_job);
    tcase_add_test(t, not_outside_or_off);
    tcase_add_test(t, not_in_a_guaranteed_run);
    suite_add_tcase(s, t);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
