# plugins/site_factor: site_factor_idletime.so, thin C against the exact Slurm source tree
# (--with-slurm-src); the policy is src/sched, linked statically.
if HAVE_SLURM_SRC
slurmplugin_LTLIBRARIES += plugins/site_factor/site_factor_idletime.la
plugins_site_factor_site_factor_idletime_la_SOURCES = plugins/site_factor/site_factor_idletime.c \
	$(idletime_slurm_internal_sources)
plugins_site_factor_site_factor_idletime_la_CPPFLAGS = $(idletime_slurm_cppflags)
plugins_site_factor_site_factor_idletime_la_LIBADD = $(idletime_slurm_plugin_libadd)
plugins_site_factor_site_factor_idletime_la_LDFLAGS = $(plugin_ldflags) $(idletime_slurm_plugin_ldflags)
nodist_EXTRA_plugins_site_factor_site_factor_idletime_la_SOURCES = dummy.cxx
endif
