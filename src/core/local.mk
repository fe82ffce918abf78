# src/core: part of the top Makefile.am
