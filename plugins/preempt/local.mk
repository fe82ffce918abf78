# plugins/preempt: preempt_idletime.so, thin C against the exact Slurm source tree
# (--with-slurm-src, internal headers, -lslurmfull); the policy is src/sched, linked statically.
# Slurm's headers come in with -isystem so their own warnings do not fail -Werror builds.
idletime_slurm_cppflags = -I$(top_srcdir)/include -I$(top_srcdir) \
	-isystem $(SLURM_SRC) -isystem $(SLURM_SRC)/src
idletime_slurm_plugin_libadd = src/sched/libidlesched.la src/core/libidlecore.la $(JSONC_LIBS)
idletime_slurm_plugin_ldflags = -L$(SLURM_FULL_LIBDIR) -lslurmfull \
	-Wl,-rpath,$(SLURM_FULL_LIBDIR) \
	-Wl,--version-script=$(top_srcdir)/plugins/preempt/slurm_plugin.map
EXTRA_DIST += plugins/preempt/slurm_plugin.map
# Shared by preempt/idletime and site_factor/idletime; slurm_2205.h / slurm_2411.h are the
# per-release adapters (slurm_internal.h picks one).
idletime_slurm_internal_sources = plugins/preempt/job_view.c plugins/preempt/plugin_config.c plugins/preempt/call_stats.c \
	plugins/preempt/slurm_internal.h plugins/preempt/slurm_2205.h plugins/preempt/slurm_2411.h \
	plugins/compat/version_guard.c
# The preempt interface: one call with PREEMPT_DATA_* up to 25.11, one function per value since 26.05.
EXTRA_DIST += plugins/preempt/preempt_api_2205.c plugins/preempt/preempt_api_2605.c
if SLURM_PREEMPT_GET_DATA
idletime_preempt_api_source = plugins/preempt/preempt_api_2205.c
else
idletime_preempt_api_source = plugins/preempt/preempt_api_2605.c
endif
if HAVE_SLURM_SRC
slurmplugin_LTLIBRARIES += plugins/preempt/preempt_idletime.la
plugins_preempt_preempt_idletime_la_SOURCES = plugins/preempt/preempt_idletime.c plugins/preempt/preempt_api.h \
	plugins/preempt/reclaim_hold.c plugins/preempt/reclaim_hold.h \
	$(idletime_preempt_api_source) $(idletime_slurm_internal_sources)
plugins_preempt_preempt_idletime_la_CPPFLAGS = $(idletime_slurm_cppflags)
plugins_preempt_preempt_idletime_la_LIBADD = $(idletime_slurm_plugin_libadd)
plugins_preempt_preempt_idletime_la_LDFLAGS = $(plugin_ldflags) $(idletime_slurm_plugin_ldflags)
nodist_EXTRA_plugins_preempt_preempt_idletime_la_SOURCES = dummy.cxx

# Same plugin claiming another Slurm version: slurmctld must refuse it (testsuite/cluster).
check_LTLIBRARIES += plugins/preempt/badver/preempt_idletime.la plugins/site_factor/badver/site_factor_idletime.la
plugins_preempt_badver_preempt_idletime_la_SOURCES = $(plugins_preempt_preempt_idletime_la_SOURCES)
plugins_preempt_badver_preempt_idletime_la_CPPFLAGS = $(idletime_slurm_cppflags) -DIDLETIME_PLUGIN_VERSION=0x160507
plugins_preempt_badver_preempt_idletime_la_LIBADD = $(idletime_slurm_plugin_libadd)
plugins_preempt_badver_preempt_idletime_la_LDFLAGS = $(plugin_ldflags) $(idletime_slurm_plugin_ldflags) -rpath /nowhere
nodist_EXTRA_plugins_preempt_badver_preempt_idletime_la_SOURCES = dummy.cxx
plugins_site_factor_badver_site_factor_idletime_la_SOURCES = plugins/site_factor/site_factor_idletime.c \
	$(idletime_slurm_internal_sources)
plugins_site_factor_badver_site_factor_idletime_la_CPPFLAGS = $(idletime_slurm_cppflags) -DIDLETIME_PLUGIN_VERSION=0x160507
plugins_site_factor_badver_site_factor_idletime_la_LIBADD = $(idletime_slurm_plugin_libadd)
plugins_site_factor_badver_site_factor_idletime_la_LDFLAGS = $(plugin_ldflags) $(idletime_slurm_plugin_ldflags) -rpath /nowhere
nodist_EXTRA_plugins_site_factor_badver_site_factor_idletime_la_SOURCES = dummy.cxx
endif
