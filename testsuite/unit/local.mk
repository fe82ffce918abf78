# testsuite/unit: part of the top Makefile.am
