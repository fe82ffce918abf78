#!/bin/sh
# Configures, builds and installs idletime into PREFIX (default /usr/local) from a build dir.
# Usage: scripts/build.sh [BUILDDIR] [extra configure args...]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/_build}
[ $# -gt 0 ] && shift
[ -x "$top/configure" ] && [ "$top/configure" -nt "$top/configure.ac" ] || "$top/scripts/bootstrap.sh"
slurm_src=$("$top/scripts/get-slurm-src.sh")
mkdir -p "$build"
cd "$build"
[ -f Makefile ] || "$top/configure" --enable-werror --with-slurm-src="$slurm_src" "$@"
make -j2
