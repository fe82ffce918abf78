# testsuite/fuzz: part of the top Makefile.am
