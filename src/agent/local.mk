# src/agent: idletime-run, the in-job fault-tolerance agent.
bin_PROGRAMS += src/agent/idletime-run
src_agent_idletime_run_SOURCES = src/agent/agent.hpp src/agent/options.cpp \
	src/agent/workers.cpp src/agent/main.cpp
src_agent_idletime_run_CPPFLAGS = $(AM_CPPFLAGS) \
	-DIDLETIME_DEFAULT_CONFIG='"$(sysconfdir)/idletime/idletime.json"'
src_agent_idletime_run_LDADD = src/hook/libidleslurmjob.la src/ft/libidleft.la \
	src/core/libidlecore.la $(JSONC_LIBS) $(SLURM_LIBS)
