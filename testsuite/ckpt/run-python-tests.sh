#!/bin/sh
# make check entry for the Python side of libidletime-ckpt: the ctypes binding and the PyTorch
# resume test, with the library just built (not an installed one).
set -eu
src=$(cd "${srcdir:-$(dirname "$0")/../..}" && pwd)
case $src in */testsuite/ckpt) src=$(cd "$src/../.." && pwd) ;; esac
lib=$(pwd)/src/ckpt/.libs/libidletime-ckpt.so
[ -f "$lib" ] || { echo "idletime/ckpt: $lib not built" >&2; exit 99; }
PY=${PYTHON3:-/usr/bin/python3}
export IDLETIME_CKPT_LIB="$lib" PYTHONPATH="$src/python${PYTHONPATH:+:$PYTHONPATH}"
. "$src/testsuite/sanitizer-preload.sh"
sanitizer_preload "$lib" || exit 99
# The library just built must load: a failure here is a hard error (99), never a skip.
"$PY" -c 'import ctypes, sys; ctypes.CDLL(sys.argv[1])' "$lib" ||
  { echo "idletime/ckpt: python3 cannot load $lib" >&2; exit 99; }
"$PY" "$src/testsuite/ckpt/test_binding.py" -v
"$PY" "$src/testsuite/ckpt/test_torch_resume.py" -v
"$PY" "$src/testsuite/ckpt/test_ddp_resume.py" -v
