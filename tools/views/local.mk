# tools/views: idletime-jobs, idletime-quota, idletime-check, run by `idletime jobs|quota|check`.
# libslurm copies data into src/views' plain structs here; all decisions live in src/views.
idletime_exec_PROGRAMS = tools/views/idletime-jobs tools/views/idletime-quota tools/views/idletime-check
noinst_LTLIBRARIES += tools/views/libviewslurm.la
tools_views_libviewslurm_la_SOURCES = tools/views/slurm_read.hpp tools/views/slurm_read.cpp \
	tools/views/slurm_cluster.cpp tools/views/cli.hpp tools/views/cli.cpp
tools_views_libviewslurm_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)
tools_views_libviewslurm_la_CXXFLAGS = $(AM_CXXFLAGS) $(JSONC_CFLAGS)
tools_views_libviewslurm_la_LIBADD = src/views/libidleviews.la $(SLURM_LIBS)
views_tool_ldadd = tools/views/libviewslurm.la src/views/libidleviews.la src/core/libidlecore.la \
	$(JSONC_LIBS) $(HWLOC_LIBS) $(SLURM_LIBS)
tools_views_idletime_jobs_SOURCES = tools/views/jobs.cpp tools/views/events.cpp
tools_views_idletime_jobs_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)
tools_views_idletime_jobs_CXXFLAGS = $(AM_CXXFLAGS) $(JSONC_CFLAGS)
tools_views_idletime_jobs_LDADD = $(views_tool_ldadd)
tools_views_idletime_quota_SOURCES = tools/views/quota.cpp
tools_views_idletime_quota_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)
tools_views_idletime_quota_CXXFLAGS = $(AM_CXXFLAGS) $(JSONC_CFLAGS)
tools_views_idletime_quota_LDADD = $(views_tool_ldadd)
tools_views_idletime_check_SOURCES = tools/views/check.cpp
tools_views_idletime_check_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)
tools_views_idletime_check_CXXFLAGS = $(AM_CXXFLAGS) $(JSONC_CFLAGS)
tools_views_idletime_check_LDADD = $(views_tool_ldadd)
