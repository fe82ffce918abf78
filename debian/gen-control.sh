#!/bin/sh
# Writes debian/control from debian/control.in for the Slurm that libslurm-dev installed: the
# plugins package is idletime-slurm-plugins-MAJOR.MINOR (slurmctld loads non-SPANK plugins only
# when they were built against its exact version). Usage: debian/gen-control.sh [SLURM_VERSION]
# (default: the installed libslurm-dev's upstream version, e.g. 22.05.8).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
ver=${1:-$(dpkg-query -W -f='${Version}' libslurm-dev 2>/dev/null)} || {
	echo "idletime/gen-control: libslurm-dev is not installed (or pass SLURM_VERSION)" >&2; exit 1; }
ver=${ver#*:}
mm=$(echo "$ver" | sed -n 's/^\([0-9][0-9]*\.[0-9][0-9]*\).*/\1/p')
[ -n "$mm" ] || { echo "idletime/gen-control: '$ver' is not a Slurm version (want MAJOR.MINOR...)" >&2; exit 1; }
sed -e "s/@PLUGINS@/idletime-slurm-plugins-$mm/g" -e "s/@SLURM_MM@/$mm/g" "$here/control.in" >"$here/control.new"
mv "$here/control.new" "$here/control"
# The plugins package's lintian overrides follow its name.
for f in "$here"/idletime-slurm-plugins-*.lintian-overrides; do
	[ "$f" = "$here/idletime-slurm-plugins-$mm.lintian-overrides" ] || rm -f "$f"
done
cp "$here/plugins.lintian-overrides.in" "$here/idletime-slurm-plugins-$mm.lintian-overrides"
echo "idletime-slurm-plugins-$mm"
