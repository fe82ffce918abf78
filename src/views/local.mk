# src/views: pure C++ views (status derivation, quota accounting, check rules, GPU check, output).
# No Slurm here: tools/views/ copies libslurm data into the plain structs these functions take.
noinst_LTLIBRARIES += src/views/libidleviews.la
src_views_libidleviews_la_SOURCES = \
	src/views/job.hpp src/views/job.cpp \
	src/views/accounting.hpp src/views/accounting.cpp \
	src/views/check.hpp src/views/check.cpp \
	src/views/gpu.hpp src/views/gpu.cpp \
	src/views/output.hpp src/views/output.cpp \
	src/views/metrics.hpp src/views/metrics.cpp
src_views_libidleviews_la_CXXFLAGS = $(AM_CXXFLAGS) $(JSONC_CFLAGS) $(HWLOC_CFLAGS)
src_views_libidleviews_la_LIBADD = src/core/libidlecore.la src/ft/libidleft.la $(JSONC_LIBS) $(HWLOC_LIBS)

# Unit tests (Check, table-driven), data in testsuite/views/data.
views_test_ldadd = src/views/libidleviews.la $(JSONC_LIBS) $(HWLOC_LIBS) $(CHECK_LIBS)
views_tests = testsuite/views/test_views_job testsuite/views/test_views_accounting \
	testsuite/views/test_views_check testsuite/views/test_views_gpu testsuite/views/test_views_output \
	testsuite/views/test_views_metrics
check_PROGRAMS += $(views_tests)
TESTS += $(views_tests)
testsuite_views_test_views_job_SOURCES = testsuite/views/test_views_job.cpp testsuite/views/views_fixture.hpp
testsuite_views_test_views_job_CXXFLAGS = $(AM_CXXFLAGS) $(CHECK_CFLAGS) $(JSONC_CFLAGS)
testsuite_views_test_views_job_LDADD = $(views_test_ldadd)
testsuite_views_test_views_accounting_SOURCES = testsuite/views/test_views_accounting.cpp testsuite/views/views_fixture.hpp
testsuite_views_test_views_accounting_CXXFLAGS = $(AM_CXXFLAGS) $(CHECK_CFLAGS) $(JSONC_CFLAGS)
testsuite_views_test_views_accounting_LDADD = $(views_test_ldadd)
testsuite_views_test_views_check_SOURCES = testsuite/views/test_views_check.cpp testsuite/views/views_fixture.hpp
testsuite_views_test_views_check_CXXFLAGS = $(AM_CXXFLAGS) $(CHECK_CFLAGS) $(JSONC_CFLAGS)
testsuite_views_test_views_check_LDADD = $(views_test_ldadd)
testsuite_views_test_views_gpu_SOURCES = testsuite/views/test_views_gpu.cpp testsuite/views/views_fixture.hpp
testsuite_views_test_views_gpu_CXXFLAGS = $(AM_CXXFLAGS) $(CHECK_CFLAGS) $(JSONC_CFLAGS)
testsuite_views_test_views_gpu_LDADD = $(views_test_ldadd)
testsuite_views_test_views_output_SOURCES = testsuite/views/test_views_output.cpp testsuite/views/views_fixture.hpp
testsuite_views_test_views_output_CXXFLAGS = $(AM_CXXFLAGS) $(CHECK_CFLAGS) $(JSONC_CFLAGS)
testsuite_views_test_views_output_LDADD = $(views_test_ldadd)
EXTRA_DIST += testsuite/views/data/a100-node.xml testsuite/views/data/h100-node.xml \
	testsuite/views/data/mixed-node.xml testsuite/views/data/none-node.xml testsuite/views/data/a100-three.xml
testsuite_views_test_views_metrics_SOURCES = testsuite/views/test_views_metrics.cpp testsuite/views/views_fixture.hpp
testsuite_views_test_views_metrics_CXXFLAGS = $(AM_CXXFLAGS) $(CHECK_CFLAGS) $(JSONC_CFLAGS)
testsuite_views_test_views_metrics_LDADD = $(views_test_ldadd)
