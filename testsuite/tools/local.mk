# Command-line behaviour of the tools (exit codes, messages).
TESTS += testsuite/tools/cli.test
EXTRA_DIST += testsuite/tools/cli.test
