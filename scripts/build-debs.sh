#!/bin/sh
# Builds idletime's Debian packages from the tree: debian/control for the installed Slurm, then
# dpkg-buildpackage -b -us -uc (configure, make, make check in BUILDDIR, install, package).
# Usage: scripts/build-debs.sh [OUTDIR]   (default _debs; run as root on Debian 12)
# Env: DEB_BUILD_OPTIONS (e.g. nocheck to skip make check), IDLETIME_DEB_BUILDDIR (default
# _build-deb: the build directory the packages come from; CI runs its tests there),
# IDLETIME_DEB_NOCLEAN=1 (dpkg-buildpackage -nc: reuse that build directory instead of starting over).
# Prints the .deb paths, one a line, on stdout.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/_debs}
case $out in /*) ;; *) out=$PWD/$out ;; esac
cd "$top"
plugins=$(debian/gen-control.sh)
IDLETIME_SLURM_SRC=$(scripts/get-slurm-src.sh)
export IDLETIME_SLURM_SRC
case " ${DEB_BUILD_OPTIONS:-} " in *" parallel="*) ;; *) DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:-} parallel=$(nproc)" ;; esac
DEB_BUILD_OPTIONS="$DEB_BUILD_OPTIONS noddebs"
export DEB_BUILD_OPTIONS
echo "idletime/build-debs: dpkg-buildpackage -b -us -uc (plugins package $plugins, Slurm source $IDLETIME_SLURM_SRC)" >&2
dpkg-buildpackage -b -us -uc ${IDLETIME_DEB_NOCLEAN:+-nc} >&2
# dpkg-buildpackage writes into the parent directory.
# Only idletime's own packages (debian/control) are replaced or moved: OUTDIR and the parent
# directory may hold other packages (a local repository).
mkdir -p "$out"
pkgs=$(sed -n 's/^Package: *//p' debian/control)
for p in $pkgs; do rm -f "$out/${p}"_*.deb; done
parent=$(dirname "$top")
ver=$(dpkg-parsechangelog -S Version)
arch=$(dpkg --print-architecture)
for f in "$parent"/*_"${ver}"_"$arch".deb "$parent"/*_"${ver}"_all.deb; do
	[ -f "$f" ] || continue
	echo "$pkgs" | grep -qx "$(basename "$f" | cut -d_ -f1)" || continue
	mv "$f" "$out/"
	echo "$out/$(basename "$f")"
done
rm -f "$parent/idletime_${ver}_${arch}.buildinfo" "$parent/idletime_${ver}_${arch}.changes"
