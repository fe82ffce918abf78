# plugins/site_factor: part of the top Makefile.am
