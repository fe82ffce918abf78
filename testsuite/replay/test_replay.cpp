// Runner: all replay suites; CK_RUN_SUITE=<name> picks one (Check reads it itself).
#include "suites.hpp"

#include <cstdlib>

int main()
{
    SRunner *sr = srunner_create(trace_suite());
    srunner_add_suite(sr, readers_suite());
    srunner_add_suite(sr, mapping_suite());
    srunner_add_suite(sr, quotas_suite());
    srunner_add_suite(sr, metrics_suite());
    srunner_add_suite(sr, tracker_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
