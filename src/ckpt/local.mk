# src/ckpt: libidletime-ckpt (checkpoints, notice, heartbeat, release), its Python binding,
# tests (testsuite/ckpt) and benchmark (bench/ckpt). Part of the top Makefile.am.
lib_LTLIBRARIES += src/ckpt/libidletime-ckpt.la
include_idletime_HEADERS += include/idletime/ckpt.h
src_ckpt_libidletime_ckpt_la_SOURCES = \
	src/ckpt/util.hpp src/ckpt/util.cpp \
	src/ckpt/manifest.hpp src/ckpt/manifest.cpp \
	src/ckpt/cred.hpp src/ckpt/cred.cpp \
	src/ckpt/store.hpp src/ckpt/store.cpp \
	src/ckpt/writer.hpp src/ckpt/writer.cpp \
	src/ckpt/session.hpp src/ckpt/session.cpp \
	src/ckpt/group.hpp src/ckpt/group.cpp \
	src/ckpt/notice.hpp src/ckpt/notice.cpp \
	src/ckpt/capi.cpp \
	src/ckpt/publish.hpp src/ckpt/publish.cpp src/sched/comment.cpp
src_ckpt_libidletime_ckpt_la_CPPFLAGS = $(AM_CPPFLAGS) $(JSONC_CFLAGS) $(MUNGE_CFLAGS) $(CRYPTO_CFLAGS) $(XXHASH_CFLAGS)
src_ckpt_libidletime_ckpt_la_LIBADD = $(JSONC_LIBS) $(MUNGE_LIBS) $(CRYPTO_LIBS) $(XXHASH_LIBS) $(SLURM_LIBS) $(PTHREAD_LIBS)
src_ckpt_libidletime_ckpt_la_LDFLAGS = -version-info 1:0:1 -no-undefined  # 1:0:1 added idletime_ckpt_notice_fd

# ---- tests (Check suites + Python unittest, all in make check) ----
noinst_LTLIBRARIES += testsuite/ckpt/libckpttest.la
testsuite_ckpt_libckpttest_la_SOURCES = testsuite/ckpt/harness.hpp testsuite/ckpt/harness.cpp
testsuite_ckpt_libckpttest_la_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS)
ckpt_test_ldadd = testsuite/ckpt/libckpttest.la src/ckpt/libidletime-ckpt.la $(CHECK_LIBS)

check_PROGRAMS += testsuite/ckpt/test_store
testsuite_ckpt_test_store_SOURCES = testsuite/ckpt/test_store.cpp
testsuite_ckpt_test_store_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS)
testsuite_ckpt_test_store_LDADD = $(ckpt_test_ldadd)
TESTS += testsuite/ckpt/test_store

check_PROGRAMS += testsuite/ckpt/test_async
testsuite_ckpt_test_async_SOURCES = testsuite/ckpt/test_async.cpp
testsuite_ckpt_test_async_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS)
testsuite_ckpt_test_async_LDADD = $(ckpt_test_ldadd)
TESTS += testsuite/ckpt/test_async

# LD_PRELOAD shim that runs a test munged with its clock ahead (clock-skew test of test_munge).
check_LTLIBRARIES += testsuite/ckpt/libtimeshift.la
testsuite_ckpt_libtimeshift_la_SOURCES = testsuite/ckpt/timeshift.c
# Preloaded into munged, which is not instrumented: never built with the sanitizers.
testsuite_ckpt_libtimeshift_la_CFLAGS = $(WARN_FLAGS)
testsuite_ckpt_libtimeshift_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
testsuite_ckpt_libtimeshift_la_LIBADD = -ldl

check_PROGRAMS += testsuite/ckpt/test_munge
testsuite_ckpt_test_munge_SOURCES = testsuite/ckpt/test_munge.cpp
testsuite_ckpt_test_munge_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS)
testsuite_ckpt_test_munge_LDADD = $(ckpt_test_ldadd)
TESTS += testsuite/ckpt/test_munge

check_PROGRAMS += testsuite/ckpt/test_reopen
testsuite_ckpt_test_reopen_SOURCES = testsuite/ckpt/test_reopen.cpp
testsuite_ckpt_test_reopen_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS)
testsuite_ckpt_test_reopen_LDADD = $(ckpt_test_ldadd)
TESTS += testsuite/ckpt/test_reopen

check_PROGRAMS += testsuite/ckpt/test_format
testsuite_ckpt_test_format_SOURCES = testsuite/ckpt/test_format.cpp
testsuite_ckpt_test_format_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS)
testsuite_ckpt_test_format_LDADD = $(ckpt_test_ldadd)
TESTS += testsuite/ckpt/test_format

check_PROGRAMS += testsuite/ckpt/test_group
testsuite_ckpt_test_group_SOURCES = testsuite/ckpt/test_group.cpp
testsuite_ckpt_test_group_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS)
testsuite_ckpt_test_group_LDADD = $(ckpt_test_ldadd)
TESTS += testsuite/ckpt/test_group

# Python side: binding unittest + PyTorch bitwise-resume test (Debian's /usr/bin/python3).
TESTS += testsuite/ckpt/run-python-tests.sh
dist_noinst_SCRIPTS += testsuite/ckpt/run-python-tests.sh
EXTRA_DIST += testsuite/ckpt/test_binding.py testsuite/ckpt/test_torch_resume.py \
	testsuite/ckpt/test_ddp_resume.py \
	testsuite/ckpt/mungetest.py

# ---- Python package: $(pythondir_idletime)/idletime ----
ckpt_pythondir = $(pythondir_idletime)/idletime
ckpt_python_DATA = python/idletime/__init__.py python/idletime/ckpt.py \
	python/idletime/torch_state.py python/idletime/ddp.py
ckpt_examplesdir = $(pythondir_idletime)/idletime/examples
ckpt_examples_SCRIPTS = python/idletime/examples/train_digits.py \
	python/idletime/examples/train_ddp.py
EXTRA_DIST += $(ckpt_python_DATA) scripts/python-sitedir.py

# ---- benchmark: bench/ckpt/run.sh BUILD_DIR ----
noinst_PROGRAMS += bench/ckpt/ckpt_bench
bench_ckpt_ckpt_bench_SOURCES = bench/ckpt/ckpt_bench.cpp
bench_ckpt_ckpt_bench_LDADD = src/ckpt/libidletime-ckpt.la
dist_noinst_SCRIPTS += bench/ckpt/run.sh bench/ckpt/multirank.py
EXTRA_DIST += bench/ckpt/README.md

# When checkpoint times are published to Slurm (pure helper of publish.cpp).
check_PROGRAMS += testsuite/ckpt/test_publish
testsuite_ckpt_test_publish_SOURCES = testsuite/ckpt/test_publish.cpp
testsuite_ckpt_test_publish_CPPFLAGS = $(AM_CPPFLAGS) $(CHECK_CFLAGS)
testsuite_ckpt_test_publish_LDADD = $(ckpt_test_ldadd)
TESTS += testsuite/ckpt/test_publish
