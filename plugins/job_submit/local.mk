# plugins/job_submit: job_submit_idletime.so (public Slurm headers only; libslurm not linked:
# slurmctld provides Slurm's symbols).
slurmplugin_LTLIBRARIES += plugins/job_submit/job_submit_idletime.la
plugins_job_submit_job_submit_idletime_la_SOURCES = plugins/job_submit/job_submit_idletime.cpp \
	plugins/job_submit/ctld_account.h plugins/compat/version_guard.c
# The DefaultAccount lookup needs slurmctld's internal assoc_mgr (ctld_account.h).
if HAVE_SLURM_SRC
plugins_job_submit_job_submit_idletime_la_SOURCES += plugins/job_submit/ctld_account.c
plugins_job_submit_job_submit_idletime_la_CPPFLAGS = $(AM_CPPFLAGS) $(idletime_slurm_cppflags)
else
plugins_job_submit_job_submit_idletime_la_SOURCES += plugins/job_submit/ctld_account_none.c
endif
EXTRA_DIST += plugins/job_submit/ctld_account.c plugins/job_submit/ctld_account_none.c
plugins_job_submit_job_submit_idletime_la_LIBADD = plugins/job_submit/libjobsubmitcore.la \
	src/sched/libidlesched.la src/core/libidlecore.la $(JSONC_LIBS)
plugins_job_submit_job_submit_idletime_la_LDFLAGS = $(plugin_ldflags) \
	-Wl,--version-script=$(top_srcdir)/plugins/job_submit/job_submit_idletime.map
EXTRA_plugins_job_submit_job_submit_idletime_la_DEPENDENCIES = \
	$(top_srcdir)/plugins/job_submit/job_submit_idletime.map
EXTRA_DIST += plugins/job_submit/job_submit_idletime.map

# The decision (Slurm-free apart from reading job_desc_msg_t), shared with tests and bench/submit.
noinst_LTLIBRARIES += plugins/job_submit/libjobsubmitcore.la
plugins_job_submit_libjobsubmitcore_la_SOURCES = \
	plugins/job_submit/decide.cpp plugins/job_submit/decide.hpp \
	plugins/job_submit/config_path.cpp plugins/job_submit/config_path.hpp \
	plugins/job_submit/env_edit.cpp plugins/job_submit/env_edit.hpp

check_PROGRAMS += plugins/job_submit/check_job_submit
TESTS += plugins/job_submit/check_job_submit
plugins_job_submit_check_job_submit_SOURCES = plugins/job_submit/check_job_submit.cpp
plugins_job_submit_check_job_submit_CPPFLAGS = $(AM_CPPFLAGS) -DIDLETIME_EXAMPLE_CONFIG='"$(top_srcdir)/etc/idletime.json"'
plugins_job_submit_check_job_submit_CXXFLAGS = $(AM_CXXFLAGS) $(CHECK_CFLAGS)
plugins_job_submit_check_job_submit_LDADD = plugins/job_submit/libjobsubmitcore.la src/sched/libidlesched.la \
	src/core/libidlecore.la \
	$(JSONC_LIBS) $(CHECK_LIBS) $(SLURM_LIBS)

# bench/submit: the plugin's own time per call (run by bench/submit/run.sh).
noinst_PROGRAMS += bench/submit/bench_decide
bench_submit_bench_decide_SOURCES = bench/submit/bench_decide.cpp
bench_submit_bench_decide_LDADD = plugins/job_submit/libjobsubmitcore.la src/sched/libidlesched.la \
	src/core/libidlecore.la $(JSONC_LIBS)
