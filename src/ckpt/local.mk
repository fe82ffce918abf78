# src/ckpt: part of the top Makefile.am
