# etc: part of the top Makefile.am
