#!/bin/sh
# Fetches Debian's source of the installed Slurm (exact version) and configures it so the
# slurmctld-side plugins (preempt/idletime, site_factor/idletime) can build against its
# internal headers. Prints the tree's path; pass it to ./configure --with-slurm-src=DIR.
# Usage: get-slurm-src.sh [DIR]   (default /var/cache/idletime/slurm-src: root-owned, writable by
#   root only, else refused; run as root)
set -eu
dest=${1:-/var/cache/idletime/slurm-src}
. "$(dirname "$0")/root-dir.sh"
ver=$(dpkg-query -W -f='${Version}' libslurm-dev 2>/dev/null) || {
    echo "idletime/get-slurm-src: libslurm-dev is not installed (run scripts/install-deps.sh)" >&2; exit 1; }
upstream=${ver%-*}
tree="$dest/slurm-wlm-$upstream"
if [ -f "$tree/config.h" ]; then echo "$tree"; exit 0; fi
if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ && ! grep -qs '^deb-src' /etc/apt/sources.list; then
    # Same archive as the binary packages, source entries.
    sed -n '/^Types: deb$/,/^$/p' /etc/apt/sources.list.d/debian.sources | sed 's/^Types: deb$/Types: deb-src/' \
        > /etc/apt/sources.list.d/idletime-deb-src.sources
    apt-get update -q >/dev/null
fi
root_dir "$dest" || exit 1
cd "$dest"
[ -d "$tree" ] || apt-get source -q "slurm-wlm=$ver" >/dev/null 2>&1 || apt-get source -q slurm-wlm >/dev/null
[ -d "$tree" ] || { echo "idletime/get-slurm-src: $tree missing after apt-get source" >&2; exit 1; }
cd "$tree"
# Flags that matter for struct layout come from debian/rules; config.h is all the plugins need.
./configure --prefix=/usr --sysconfdir=/etc/slurm --enable-multiple-slurmd --with-pmix=no \
    --without-hdf5 --without-rrdtool --disable-debug >configure.log 2>&1 ||
    { tail -20 configure.log >&2; exit 1; }
echo "$tree"
