# Command-line behaviour of the tools (exit codes, messages).
TESTS += testsuite/tools/cli.test testsuite/tools/options.test testsuite/tools/ft-hook-conf.test testsuite/tools/root-dir.test testsuite/tools/slurm-git.test
EXTRA_DIST += testsuite/tools/cli.test testsuite/tools/options.test testsuite/tools/ft-hook-conf.test testsuite/tools/root-dir.test testsuite/tools/slurm-git.test scripts/root-dir.sh scripts/slurm-git.sh
# options.test finds the installed programs, libexec tools and man pages through these.
TEST_LOG_COMPILER = env IT_PROGRAMS='$(PROGRAMS)' IT_NOINST='$(noinst_PROGRAMS)' \
	IT_EXEC='$(idletime_exec_PROGRAMS)' IT_MANS='$(dist_man_MANS)' IT_VERSION='$(PACKAGE_VERSION)'
# configure's Python package directory (scripts/python-sitedir.py) and, after make install, the
# README's `from idletime import ...` in a fresh shell (make installcheck; CI runs it as root).
TESTS += testsuite/tools/python-sitedir.test testsuite/tools/python-venv.test
EXTRA_DIST += testsuite/sanitizer-preload.sh testsuite/tools/python-sitedir.test testsuite/tools/python-venv.test python/pyproject.toml python/README.md testsuite/tools/python-install.sh
installcheck-local:
	PYTHONDIR='$(pythondir_idletime)' PREFIX='$(prefix)' top_srcdir='$(abs_top_srcdir)' \
	PYTHON3='$(PYTHON3)' $(SHELL) $(top_srcdir)/testsuite/tools/python-install.sh
