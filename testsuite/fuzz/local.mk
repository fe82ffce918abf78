# Coverage-guided fuzzing of the config parser (clang libFuzzer). `make check` runs it briefly;
# `make fuzz FUZZ_SECONDS=600` runs it long.
FUZZ_SECONDS ?= 600
fuzz_core_sources = src/core/config.cpp src/core/config_parse.cpp src/core/config_validate.cpp \
	src/core/hostlist.cpp src/core/json_reader.cpp src/core/render.cpp src/core/resolve.cpp src/core/signals.cpp
EXTRA_DIST += testsuite/fuzz/fuzz_config.cpp testsuite/fuzz/run.sh testsuite/fuzz/config.dict
if HAVE_FUZZ
testsuite/fuzz/fuzz_config: $(top_srcdir)/testsuite/fuzz/fuzz_config.cpp $(addprefix $(top_srcdir)/,$(fuzz_core_sources))
	@mkdir -p testsuite/fuzz
	$(AM_V_CXX)$(FUZZ_CXX) -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	  -I$(top_srcdir)/include -I$(top_srcdir)/src $(JSONC_CFLAGS) $^ $(JSONC_LIBS) -o $@
check_SCRIPTS = testsuite/fuzz/fuzz_config
TESTS += testsuite/fuzz/short.test
CLEANFILES += testsuite/fuzz/fuzz_config testsuite/fuzz/short.test
testsuite/fuzz/short.test: Makefile
	@mkdir -p testsuite/fuzz
	@printf '#!/bin/sh\nexec $(abs_top_srcdir)/testsuite/fuzz/run.sh $(abs_builddir)/testsuite/fuzz/fuzz_config 30\n' > $@
	@chmod +x $@
check_SCRIPTS += testsuite/fuzz/short.test
fuzz: testsuite/fuzz/fuzz_config
	top_srcdir=$(abs_top_srcdir) $(top_srcdir)/testsuite/fuzz/run.sh testsuite/fuzz/fuzz_config $(FUZZ_SECONDS)
PHONY_TARGETS += fuzz
endif
