# src/ft: fault-tolerance decision core (pure C++, json-c only) and its Check suite.
noinst_LTLIBRARIES += src/ft/libidleft.la
src_ft_libidleft_la_SOURCES = src/ft/ft.hpp src/ft/classify.cpp src/ft/decide.cpp src/ft/state.cpp \
	src/ft/judge.hpp src/ft/judge.cpp
src_ft_libidleft_la_CXXFLAGS = $(AM_CXXFLAGS) $(JSONC_CFLAGS)
src_ft_libidleft_la_LIBADD = $(JSONC_LIBS)

check_PROGRAMS += src/ft/test_ft
TESTS += src/ft/test_ft
src_ft_test_ft_SOURCES = src/ft/test_ft.cpp src/ft/test_ft_state.cpp src/ft/test_ft_judge.cpp
src_ft_test_ft_CXXFLAGS = $(AM_CXXFLAGS) $(CHECK_CFLAGS)
src_ft_test_ft_LDADD = src/ft/libidleft.la $(CHECK_LIBS)
