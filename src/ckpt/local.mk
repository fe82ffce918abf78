# src/ckpt: libidletime-ckpt (checkpoints, notice, heartbeat, release), its Python binding,
# tests (testsuite/ckpt) and benchmark (bench/ckpt). Part of the top Makefile.am.
lib_LTLIBRARIES += src/ckpt/libidletime-ckpt.la
include_idletime_HEADERS += include/idletime/ckpt.h
src_ckpt_libidletime_ckpt_la_SOURCES = \
	src/ckpt/util.hpp src/ckpt/util.cpp \
	src/ckpt/manifest.hpp src/ckpt/manifest.cpp \
	src/ckpt/cred.hpp src/ckpt/cred.cpp \
	src/ckpt/store.hpp src/ckpt/store.cpp \
	src/ckpt/session.hpp src/ckpt/session.cpp \
	src/ckpt/notice.hpp src/ckpt/notice.cpp \
	src/ckpt/capi.cpp
src_ckpt_libidletime_ckpt_la_CPPFLAGS = $(AM_CPPFLAGS) $(JSONC_CFLAGS) $(MUNGE_CFLAGS) $(CRYPTO_CFLAGS)
src_ckpt_libidletime_ckpt_la_LIBADD = $(JSONC_LIBS) $(MUNGE_LIBS) $(CRYPTO_LIBS) $(SLURM_LIBS) $(PTHREAD_LIBS)
src_ckpt_libidletime_ckpt_la_LDFLAGS = -version-info 0:0:0 -no-undefined
