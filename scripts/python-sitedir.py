#!/usr/bin/python3
"""Prints the directory `make install` puts the idletime Python package in for PREFIX (configure
runs this with $PYTHON3, default Debian's /usr/bin/python3).

The directory under PREFIX that this interpreter already searches: on Debian 12
/usr/local/lib/python3.11/dist-packages for /usr/local and /usr/lib/python3/dist-packages for /usr,
so `import idletime` works in a fresh shell. For a PREFIX the interpreter does not search (e.g.
/opt/...): PREFIX/lib/python3.X/site-packages, which PYTHONPATH must then name; the second line
of output says so.
Usage: python-sitedir.py PREFIX"""
import os
import site
import sys
import sysconfig


def searched_dir(prefix):
    for d in site.getsitepackages():
        rel = os.path.relpath(os.path.normpath(d), prefix)
        if rel.startswith("lib") and not rel.startswith(".."):
            return os.path.normpath(d)
    return None


def main():
    if len(sys.argv) != 2 or not os.path.isabs(sys.argv[1]):
        sys.stderr.write("python-sitedir.py: expects one absolute PREFIX\n")
        return 2
    prefix = os.path.normpath(sys.argv[1])
    d = searched_dir(prefix)
    if d:
        print(d)
        return 0
    print(sysconfig.get_path("purelib", "posix_prefix", vars={"base": prefix, "platbase": prefix}))
    print("not searched by %s: set PYTHONPATH" % sys.executable)
    return 0


if __name__ == "__main__":
    sys.exit(main())
