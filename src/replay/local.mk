# src/replay: part of the top Makefile.am
