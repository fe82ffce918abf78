# plugins/spank: part of the top Makefile.am
