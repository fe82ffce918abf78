// One runner for the sched suites (CK_RUN_SUITE picks one).
#include <check.h>

#include <cstdlib>

Suite *preempt_suite();
Suite *victims_suite();
Suite *borrow_suite();
Suite *capi_suite();
Suite *holds_suite();
Suite *passes_suite();

int main() {
    SRunner *sr = srunner_create(preempt_suite());
    srunner_add_suite(sr, victims_suite());
    srunner_add_suite(sr, borrow_suite());
    srunner_add_suite(sr, capi_suite());
    srunner_add_suite(sr, holds_suite());
    srunner_add_suite(sr, passes_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
