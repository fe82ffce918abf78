# Command-line tools. Subcommands that are separate programs install into $(idletime_execdir).
idletime_execdir = $(libexecdir)/idletime
bin_PROGRAMS += tools/idletime
tools_idletime_SOURCES = tools/idletime.cpp
tools_idletime_CPPFLAGS = $(AM_CPPFLAGS) -DIDLETIME_LIBEXECDIR='"$(idletime_execdir)"' \
	-DIDLETIME_BINDIR='"$(bindir)"'
tools_idletime_LDADD = src/core/libidlecore.la $(JSONC_LIBS)
