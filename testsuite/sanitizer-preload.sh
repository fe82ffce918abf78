# Sourced by the make check scripts that load the just-built libidletime-ckpt into python3.
# A sanitized build (--enable-sanitizers) leaves the sanitizer runtimes undefined in the library
# (libtool links it without them), so python3 must load them first or the dlopen fails. Sets
# LD_PRELOAD (and ASAN_OPTIONS: python3 itself leaks by design) when $lib is sanitized; returns 99
# (a hard error, never a skip) when a runtime is missing.
sanitizer_preload() { # $1: the library
  nm -D "$1" | grep -q -E ' U __(asan|ubsan)_' || return 0
  _san=
  for _rt in libasan.so libubsan.so; do
    _f=$(${CC:-gcc} -print-file-name=$_rt)
    [ -f "$_f" ] || { echo "idletime: sanitized $1, but $_rt not found" >&2; return 99; }
    _san="$_san${_san:+ }$_f"
  done
  export LD_PRELOAD="$_san${LD_PRELOAD:+ $LD_PRELOAD}" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
}
