# tools: part of the top Makefile.am
