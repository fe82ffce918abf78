# tools/replay: idletime-replay (the driver) and idletime-replay-job (the work of one job).
bin_PROGRAMS += tools/replay/idletime-replay tools/replay/idletime-replay-job
tools_replay_idletime_replay_SOURCES = \
	tools/replay/main.cpp \
	tools/replay/options.hpp tools/replay/options.cpp \
	tools/replay/out_dir.hpp tools/replay/out_dir.cpp \
	tools/replay/setup.hpp tools/replay/setup.cpp \
	tools/replay/runner.hpp tools/replay/runner.cpp \
	tools/replay/report.hpp tools/replay/report.cpp \
	tools/replay/spread.hpp tools/replay/spread.cpp \
	tools/replay/slurm_client.hpp tools/replay/slurm_client.cpp
tools_replay_idletime_replay_CPPFLAGS = $(AM_CPPFLAGS) $(JSONC_CFLAGS) \
	-DIDLETIME_SRCDIR='"$(abs_top_srcdir)"'
tools_replay_idletime_replay_LDADD = src/replay/libidlereplay.la src/core/libidlecore.la $(JSONC_LIBS) $(SLURM_LIBS)

tools_replay_idletime_replay_job_SOURCES = tools/replay/job.cpp
tools_replay_idletime_replay_job_LDADD = src/ckpt/libidletime-ckpt.la

# CLI test of `idletime-replay map` (fixture in testsuite/replay/data).
TESTS += testsuite/replay/t-map.sh
dist_noinst_SCRIPTS += testsuite/replay/t-map.sh
dist_noinst_SCRIPTS += bench/replay/openb.sh
EXTRA_DIST += doc/replay/README.md
dist_man_MANS += doc/replay/idletime-replay.1
# Needs the live cluster (root): run by hand, like testsuite/cluster/run-tests.sh.
EXTRA_DIST += testsuite/replay/data/openb_gpuspec33_12100000_2h.csv testsuite/replay/data/README.md
