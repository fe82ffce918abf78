# src/replay: trace -> job stream mapping and replay metrics (pure C++, no Slurm).
noinst_LTLIBRARIES += src/replay/libidlereplay.la
src_replay_libidlereplay_la_SOURCES = \
	src/replay/trace.hpp src/replay/trace.cpp src/replay/trace_text.hpp \
	src/replay/trace_sacct.cpp src/replay/trace_swf.cpp \
	src/replay/mapping.hpp src/replay/mapping.cpp \
	src/replay/stream.hpp src/replay/stream.cpp \
	src/replay/metrics.hpp src/replay/metrics.cpp \
	src/replay/tracker.hpp src/replay/tracker.cpp

# Unit tests (sources under testsuite/replay/).
check_PROGRAMS += testsuite/replay/test_replay
TESTS += testsuite/replay/test_replay
testsuite_replay_test_replay_SOURCES = \
	testsuite/replay/test_replay.cpp testsuite/replay/test_trace.cpp \
	testsuite/replay/test_mapping.cpp testsuite/replay/test_metrics.cpp \
	testsuite/replay/test_tracker.cpp testsuite/replay/test_readers.cpp \
	testsuite/replay/test_quotas.cpp \
	testsuite/replay/suites.hpp
testsuite_replay_test_replay_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS) \
	-DREPLAY_TEST_DATA='"$(abs_top_srcdir)/testsuite/replay/data"'
testsuite_replay_test_replay_LDADD = src/replay/libidlereplay.la $(CHECK_LIBS)
EXTRA_DIST += testsuite/replay/data/openb_small.csv testsuite/replay/data/openb_badqos.csv \
	testsuite/replay/data/openb_nocol.csv testsuite/replay/data/sacct_small.txt \
	testsuite/replay/data/sacct_reqtres.txt testsuite/replay/data/sacct_notres.txt \
	testsuite/replay/data/swf_small.swf
