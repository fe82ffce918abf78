# doc: part of the top Makefile.am
