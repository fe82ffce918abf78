# src/views: part of the top Makefile.am
