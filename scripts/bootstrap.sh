#!/bin/sh
# Regenerate the autotools build files (configure, Makefile.in) from configure.ac/Makefile.am.
set -eu
cd "$(dirname "$0")/.."
autoreconf -fi
