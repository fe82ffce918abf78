# plugins/spank: spank_idletime.so (sbatch/srun/salloc options, job environment, checkpoint dir,
# GPU check of the node at slurmd start).
# libslurm is not linked: every process that loads SPANK plugins already has Slurm's symbols.
slurmplugin_LTLIBRARIES += plugins/spank/spank_idletime.la
plugins_spank_spank_idletime_la_SOURCES = \
	plugins/spank/spank_idletime.cpp plugins/spank/spank_c.h plugins/spank/hooks.hpp plugins/spank/idletime_env.h \
	plugins/spank/submit_side.cpp plugins/spank/job_side.cpp plugins/spank/node_check.cpp \
	plugins/compat/version_guard.c
# node_check.cpp: hwloc GPU check at slurmd start (src/views/gpu.hpp). libidleviews.la already
# holds libidlecore's objects (linking both duplicates them).
plugins_spank_spank_idletime_la_LIBADD = plugins/spank/libspankcore.la src/views/libidleviews.la \
	$(JSONC_LIBS) $(HWLOC_LIBS)
plugins_spank_spank_idletime_la_LDFLAGS = $(plugin_ldflags) \
	-Wl,--version-script=$(top_srcdir)/plugins/spank/spank_idletime.map
EXTRA_plugins_spank_spank_idletime_la_DEPENDENCIES = $(top_srcdir)/plugins/spank/spank_idletime.map
EXTRA_DIST += plugins/spank/spank_idletime.map

# Slurm-free part (option table, checkpoint directory), shared with the unit test.
noinst_LTLIBRARIES += plugins/spank/libspankcore.la
plugins_spank_libspankcore_la_SOURCES = \
	plugins/spank/options.cpp plugins/spank/options.hpp \
	plugins/spank/ckpt_dir.cpp plugins/spank/ckpt_dir.hpp plugins/spank/job_key.hpp

check_PROGRAMS += plugins/spank/check_spank
TESTS += plugins/spank/check_spank
plugins_spank_check_spank_SOURCES = plugins/spank/check_spank.cpp
plugins_spank_check_spank_CXXFLAGS = $(AM_CXXFLAGS) $(CHECK_CFLAGS)
plugins_spank_check_spank_LDADD = plugins/spank/libspankcore.la $(CHECK_LIBS)

dist_man_MANS += doc/man/spank_idletime.8
