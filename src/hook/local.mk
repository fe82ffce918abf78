# src/hook: controller-side fault-tolerance hook (EpilogSlurmctld program) and the thin
# libslurm layer it shares with the in-job agent (src/agent).
noinst_LTLIBRARIES += src/hook/libidleslurmjob.la
src_hook_libidleslurmjob_la_SOURCES = src/hook/slurm_job.hpp src/hook/slurm_job.cpp
src_hook_libidleslurmjob_la_LIBADD = src/ft/libidleft.la $(SLURM_LIBS)

sbin_PROGRAMS += src/hook/idletime-ft-hook
src_hook_idletime_ft_hook_SOURCES = src/hook/ft_hook.cpp src/hook/hook_cli.hpp src/hook/hook_cli.cpp src/hook/retention.cpp src/hook/retention.hpp \
	src/hook/waker.hpp src/hook/waker.cpp src/hook/resume.hpp src/hook/resume.cpp \
	src/hook/pass_gate.hpp src/hook/pass_gate.cpp src/hook/preemptor.hpp src/hook/preemptor.cpp \
	src/hook/journal.hpp src/hook/journal.cpp src/hook/poll_share.hpp src/hook/poll_share.cpp \
	src/hook/state_file.hpp src/hook/state_file.cpp
src_hook_idletime_ft_hook_CPPFLAGS = $(AM_CPPFLAGS) \
	-DIDLETIME_DEFAULT_CONFIG='"$(sysconfdir)/idletime/idletime.json"' \
	-DIDLETIME_DEFAULT_LAST_GOOD='"$(localstatedir)/lib/idletime/ft-hook-last-good.json"' \
	-DIDLETIME_DEFAULT_WAKE_DIR='"$(localstatedir)/lib/idletime/ft-hook-wake"'
src_hook_idletime_ft_hook_LDADD = src/hook/libidleslurmjob.la src/ft/libidleft.la plugins/spank/libspankcore.la \
	src/core/libidlecore.la $(JSONC_LIBS) $(SLURM_LIBS)

check_PROGRAMS += src/hook/check_retention
TESTS += src/hook/check_retention
src_hook_check_retention_SOURCES = src/hook/check_retention.cpp src/hook/retention.cpp src/hook/retention.hpp
src_hook_check_retention_CXXFLAGS = $(AM_CXXFLAGS) $(CHECK_CFLAGS)
src_hook_check_retention_LDADD = plugins/spank/libspankcore.la src/core/libidlecore.la $(JSONC_LIBS) \
	$(CHECK_LIBS) $(SLURM_LIBS)

# The shared backoff waker (issue 11 item 7).
check_PROGRAMS += src/hook/test_waker
TESTS += src/hook/test_waker
src_hook_test_waker_SOURCES = src/hook/test_waker.cpp src/hook/waker.hpp src/hook/waker.cpp
src_hook_test_waker_CXXFLAGS = $(AM_CXXFLAGS) $(CHECK_CFLAGS)
src_hook_test_waker_LDADD = $(CHECK_LIBS)

# The in-flight journal: work of a hook killed mid-way is finished by the next (security.md R5).
check_PROGRAMS += src/hook/test_journal
TESTS += src/hook/test_journal
src_hook_test_journal_SOURCES = src/hook/test_journal.cpp src/hook/journal.hpp src/hook/journal.cpp
src_hook_test_journal_CXXFLAGS = $(AM_CXXFLAGS) $(CHECK_CFLAGS) $(JSONC_CFLAGS)
src_hook_test_journal_LDADD = $(JSONC_LIBS) $(CHECK_LIBS)

# When a preempted run's requeue hold is lifted (issue 14).
check_PROGRAMS += src/hook/test_resume
TESTS += src/hook/test_resume
src_hook_test_resume_SOURCES = src/hook/test_resume.cpp src/hook/resume.hpp src/hook/resume.cpp
src_hook_test_resume_CXXFLAGS = $(AM_CXXFLAGS) $(CHECK_CFLAGS)
src_hook_test_resume_LDADD = $(CHECK_LIBS)

# The cluster-wide pass gate (security.md R1).
check_PROGRAMS += src/hook/test_pass_gate
TESTS += src/hook/test_pass_gate
src_hook_test_pass_gate_SOURCES = src/hook/test_pass_gate.cpp src/hook/pass_gate.hpp src/hook/pass_gate.cpp \
	src/hook/state_file.hpp src/hook/state_file.cpp
src_hook_test_pass_gate_CXXFLAGS = $(AM_CXXFLAGS) $(CHECK_CFLAGS)
src_hook_test_pass_gate_LDADD = $(CHECK_LIBS)

# The poll rate the hooks of ended jobs share (security.md R1).
check_PROGRAMS += src/hook/test_poll_share
TESTS += src/hook/test_poll_share
src_hook_test_poll_share_SOURCES = src/hook/test_poll_share.cpp src/hook/poll_share.hpp src/hook/poll_share.cpp \
	src/hook/state_file.hpp src/hook/state_file.cpp
src_hook_test_poll_share_CXXFLAGS = $(AM_CXXFLAGS) $(CHECK_CFLAGS)
src_hook_test_poll_share_LDADD = $(CHECK_LIBS)

# The preemptor's shared snapshot (security.md R2).
check_PROGRAMS += src/hook/test_preemptor
TESTS += src/hook/test_preemptor
src_hook_test_preemptor_SOURCES = src/hook/test_preemptor.cpp src/hook/preemptor.hpp src/hook/preemptor.cpp \
	src/hook/state_file.hpp src/hook/state_file.cpp
src_hook_test_preemptor_CXXFLAGS = $(AM_CXXFLAGS) $(CHECK_CFLAGS)
src_hook_test_preemptor_LDADD = $(CHECK_LIBS)
