# src/sched: scheduling policy of preempt/idletime and site_factor/idletime (Slurm-free C++,
# C API include/idletime/sched.h), linked statically into the two plugins.
noinst_LTLIBRARIES += src/sched/libidlesched.la
src_sched_libidlesched_la_SOURCES = \
	src/sched/policy.hpp src/sched/id_map.hpp src/sched/policy.cpp src/sched/comment.cpp \
	src/sched/victims.cpp src/sched/holds.cpp src/sched/passes.cpp src/sched/borrow.cpp src/sched/capi.cpp
# Users link src/core/libidlecore.la and $(JSONC_LIBS) after it (not embedded: no duplicates).
include_idletime_HEADERS += include/idletime/sched.h

sched_test_ldadd = src/sched/libidlesched.la src/core/libidlecore.la $(JSONC_LIBS) $(CHECK_LIBS)
sched_tests = testsuite/sched/test_sched
check_PROGRAMS += $(sched_tests)
TESTS += $(sched_tests)
testsuite_sched_test_sched_SOURCES = testsuite/sched/test_sched.cpp testsuite/sched/test_preempt.cpp \
	testsuite/sched/test_victims.cpp testsuite/sched/test_borrow.cpp testsuite/sched/test_capi.cpp testsuite/sched/test_holds.cpp testsuite/sched/test_passes.cpp \
	testsuite/sched/sched_fixture.hpp
testsuite_sched_test_sched_CXXFLAGS = $(AM_CXXFLAGS) $(CHECK_CFLAGS)
testsuite_sched_test_sched_LDADD = $(sched_test_ldadd)
EXTRA_DIST += testsuite/sched/data/sched16.json testsuite/sched/data/broken.json \
	testsuite/sched/data/sched-slurm.conf testsuite/sched/README

# ---- benchmark: bench/sched/victims_bench [N [SEARCHES]] (ratio against the previous batch) ----
noinst_PROGRAMS += bench/sched/victims_bench
bench_sched_victims_bench_SOURCES = bench/sched/victims_bench.cpp
bench_sched_victims_bench_LDADD = src/sched/libidlesched.la
