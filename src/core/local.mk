# Policy core: Slurm-free C++ (config model, validation, mode resolution, rendering) and its C API.
noinst_LTLIBRARIES += src/core/libidlecore.la
src_core_libidlecore_la_SOURCES = \
	src/core/capi.cpp src/core/cmdline.hpp \
	src/core/config.cpp src/core/config.hpp \
	src/core/config_parse.cpp src/core/config_validate.cpp \
	src/core/ft_settings.hpp \
	src/core/hostlist.cpp src/core/hostlist.hpp \
	src/core/json_reader.cpp src/core/json_reader.hpp src/core/log_text.hpp \
	src/core/render.cpp src/core/render.hpp \
	src/core/resolve.cpp src/core/resolve.hpp \
	src/core/signals.cpp src/core/signals.hpp \
	src/core/victim_note.cpp src/core/victim_note.hpp
src_core_libidlecore_la_CXXFLAGS = $(AM_CXXFLAGS) $(JSONC_CFLAGS)
src_core_libidlecore_la_LIBADD = $(JSONC_LIBS)

# Installed shared library with the C API (include/idletime/idletime.h, idletime-core.pc).
lib_LTLIBRARIES += src/core/libidletime.la
src_core_libidletime_la_SOURCES =
src_core_libidletime_la_LIBADD = src/core/libidlecore.la $(JSONC_LIBS)
src_core_libidletime_la_LDFLAGS = -version-info 0:0:0
nodist_EXTRA_src_core_libidletime_la_SOURCES = dummy.cxx
include_idletime_HEADERS += include/idletime/idletime.h
