#!/bin/sh
# `make installcheck`: the installed Python package imports with Debian's /usr/bin/python3 in a
# fresh shell (env -i: no PYTHONPATH), running README's Python line as written. CI installs into
# /usr/local, whose package directory python3 searches. For a prefix python3 does not search
# (e.g. /opt/it-NAME: configure warned), the same line runs with PYTHONPATH=that directory, and
# the test checks that scripts/python-sitedir.py agrees it is not searched.
# Env (from make): PYTHONDIR (configure's package directory, expanded), PREFIX, top_srcdir.
set -u
: "${PYTHONDIR:?run by make installcheck}" "${PREFIX:?}"
top=${top_srcdir:-.}
py=${PYTHON3:-/usr/bin/python3}
line=$(grep -o '`from idletime import [^`]*`' "$top/README.md" | head -n 1 | tr -d '`')
[ -n "$line" ] || { echo "FAIL: no \`from idletime import ...\` line in README.md"; exit 1; }
[ -f "$PYTHONDIR/idletime/__init__.py" ] || { echo "FAIL: $PYTHONDIR/idletime/__init__.py not installed"; exit 1; }
searched=$(env -i PATH=/usr/bin:/bin "$py" -c 'import sys; print("\n".join(sys.path))' | grep -cx "$PYTHONDIR")
if [ "$searched" -ge 1 ]; then
    out=$(cd / && env -i PATH=/usr/bin:/bin HOME=/nonexistent "$py" -c "$line; import idletime; print(idletime.__file__)" 2>&1) ||
        { echo "FAIL: fresh shell: $py -c '$line': $out"; exit 1; }
    [ "$out" = "$PYTHONDIR/idletime/__init__.py" ] || { echo "FAIL: imported $out, not the installed $PYTHONDIR"; exit 1; }
    echo "ok: fresh shell, no PYTHONPATH: $py -c '$line' imports $out"
else
    "$py" "$top/scripts/python-sitedir.py" "$PREFIX" | grep -q 'set PYTHONPATH' ||
        { echo "FAIL: $PYTHONDIR is not searched by $py, yet python-sitedir.py says it is"; exit 1; }
    out=$(cd / && env -i PATH=/usr/bin:/bin HOME=/nonexistent PYTHONPATH="$PYTHONDIR" "$py" -c "$line; import idletime; print(idletime.__file__)" 2>&1) ||
        { echo "FAIL: PYTHONPATH=$PYTHONDIR $py -c '$line': $out"; exit 1; }
    [ "$out" = "$PYTHONDIR/idletime/__init__.py" ] || { echo "FAIL: imported $out, not $PYTHONDIR"; exit 1; }
    echo "ok: prefix $PREFIX is not searched by $py (as configure warned): with PYTHONPATH=$PYTHONDIR, '$line' imports $out"
fi
