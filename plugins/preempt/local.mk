# plugins/preempt: part of the top Makefile.am
