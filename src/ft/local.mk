# src/ft: part of the top Makefile.am
