# Unit tests of the policy core (Check; no Slurm needed). Tests find fixtures through top_srcdir.
AM_TESTS_ENVIRONMENT = top_srcdir='$(abs_top_srcdir)'; export top_srcdir;
core_test_cxxflags = $(AM_CXXFLAGS) $(CHECK_CFLAGS) $(JSONC_CFLAGS)
core_test_ldadd = src/core/libidlecore.la $(JSONC_LIBS) $(CHECK_LIBS)
core_tests = testsuite/unit/test_hostlist testsuite/unit/test_config testsuite/unit/test_resolve \
	testsuite/unit/test_render testsuite/unit/test_log_text testsuite/unit/test_victim_note
check_PROGRAMS += $(core_tests)
TESTS += $(core_tests)
testsuite_unit_test_hostlist_SOURCES = testsuite/unit/test_hostlist.cpp testsuite/unit/check_main.hpp
testsuite_unit_test_hostlist_CXXFLAGS = $(core_test_cxxflags)
testsuite_unit_test_hostlist_LDADD = $(core_test_ldadd)
testsuite_unit_test_config_SOURCES = testsuite/unit/test_config.cpp testsuite/unit/check_main.hpp
testsuite_unit_test_config_CXXFLAGS = $(core_test_cxxflags)
testsuite_unit_test_config_LDADD = $(core_test_ldadd)
testsuite_unit_test_resolve_SOURCES = testsuite/unit/test_resolve.cpp testsuite/unit/check_main.hpp
testsuite_unit_test_resolve_CXXFLAGS = $(core_test_cxxflags)
testsuite_unit_test_resolve_LDADD = $(core_test_ldadd)
testsuite_unit_test_render_SOURCES = testsuite/unit/test_render.cpp testsuite/unit/check_main.hpp
testsuite_unit_test_render_CXXFLAGS = $(core_test_cxxflags)
testsuite_unit_test_render_LDADD = $(core_test_ldadd)
testsuite_unit_test_log_text_SOURCES = testsuite/unit/test_log_text.cpp testsuite/unit/check_main.hpp
testsuite_unit_test_log_text_CXXFLAGS = $(core_test_cxxflags)
testsuite_unit_test_log_text_LDADD = $(core_test_ldadd)
testsuite_unit_test_victim_note_SOURCES = testsuite/unit/test_victim_note.cpp testsuite/unit/check_main.hpp
testsuite_unit_test_victim_note_CXXFLAGS = $(core_test_cxxflags)
testsuite_unit_test_victim_note_LDADD = $(core_test_ldadd)
EXTRA_DIST += testsuite/unit/data/render-example.txt
