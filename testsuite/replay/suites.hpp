// Check suites of the replay module (one per source file under src/replay/).
#pragma once
#include <check.h>

Suite *trace_suite();
Suite *readers_suite();
Suite *quotas_suite();
Suite *mapping_suite();
Suite *metrics_suite();
Suite *tracker_suite();
