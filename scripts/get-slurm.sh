#!/bin/sh
# Fetches Debian's source of one Slurm generation, builds it once into its own prefix and
# prints that prefix. A later call reuses the build. Binaries of trixie or sid are never
# installed (they would need their libc): only their source package is fetched.
# Usage: get-slurm.sh [--src|--fetch] 22.05|24.11|26.05   (run as root)
#   prints the prefix (22.05: /usr, Debian 12's packages); --src prints the configured source
#   tree instead (pass it to idletime's ./configure --with-slurm-src=DIR); --fetch only fetches
#   and unpacks the source (no build) and prints the tree.
# When Debian's archive cannot deliver a series' source (seen: sid's files answered 404), a SchedMD
# release tarball of that series in IDLETIME_SLURM_CACHE (slurm-26.05.3.tar.bz2) is built instead.
# Exit status 3: no source of that series could be obtained (nothing was built); 1: other errors,
# among them a tarball or clone named by IDLETIME_SLURM_TARBALL or IDLETIME_SLURM_GIT refused.
# Environment: IDLETIME_SLURM_ROOT (default /opt/slurm; the build goes to ROOT/<version>),
#   IDLETIME_SLURM_CACHE (sources, default /var/cache/idletime/slurm-src: root-owned, writable by
#   root only, else refused), IDLETIME_SLURM_JOBS (default 2),
#   IDLETIME_SLURM_TARBALL (a SchedMD release tarball to use when Debian's source is missing),
#   IDLETIME_SLURM_GIT (a clone of SchedMD's slurm repository, bare or not: when neither Debian's
#   archive nor a tarball delivers the series, the newest release tag of the series,
#   slurm-MM-NN-P-1, is written as slurm-MM.NN.P.tar.bz2 into the source directory and used;
#   every file of its git directory must be root's and writable by root only: scripts/slurm-git.sh),
#   IDLETIME_SLURM_GIT_TAG (that release tag instead of the newest, e.g. the one you verified).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
want=src_no
case "${1:-}" in --src) want=src; shift ;; --fetch) want=fetch; shift ;; esac
series=${1:-}
root=${IDLETIME_SLURM_ROOT:-/opt/slurm}
srcroot=${IDLETIME_SLURM_CACHE:-/var/cache/idletime/slurm-src}
jobs=${IDLETIME_SLURM_JOBS:-2}
# fetch_source changes directory: paths named relative to the caller's are made absolute first.
case ${IDLETIME_SLURM_GIT:-/} in /*) ;; *) IDLETIME_SLURM_GIT=$PWD/$IDLETIME_SLURM_GIT ;; esac
case ${IDLETIME_SLURM_TARBALL:-/} in /*) ;; *) IDLETIME_SLURM_TARBALL=$PWD/$IDLETIME_SLURM_TARBALL ;; esac
die() { echo "idletime/get-slurm: $*" >&2; exit 1; }

# fetch_source: apt-get source; where the archive lacks a file at the suite's own pool (seen:
# the .dsc of a security update), each file is taken from whichever of the suite's pools has it,
# checked against the SHA-256 in the signed Sources index, unpacked and patched as dpkg-source does.
fetch_source() {
    cd "$srcroot" || return 1
    log=$srcroot/apt-source-$upstream.log
    if apt-get source -q "slurm-wlm=$debver" >/dev/null 2>"$log" && [ -d "$tree" ]; then return 0; fi
    # apt-cache showsrc takes no =VERSION: keep the checksums of the stanza of that version.
    sums=$(apt-cache showsrc slurm-wlm | awk -v v="$debver" '/^Package:/{ok=0} /^Version:/{ok=($2 == v)}
        /^Checksums-Sha256:/{c=ok;next} c&&/^ /{print $1, $3; next} {c=0}' | sort -u)
    [ -n "$sums" ] || { echo "idletime/get-slurm: no checksums for slurm-wlm $debver in the apt lists" >&2; return 1; }
    uris=$(for s in "$suite" "$suite-security"; do apt-get source --print-uris -q "slurm-wlm/$s" 2>/dev/null; done |
        sed -n "s/^'\([^']*\)'.*/\1/p")
    for f in $(echo "$sums" | awk '{print $2}' | grep -v '\.dsc$'); do
        sum=$(echo "$sums" | awk -v f="$f" '$2 == f {print $1}')
        for u in $(echo "$uris" | grep -F "/$(echo "$f" | sed 's/+/%2b/g')" ; echo "$uris" | grep -F "/$f"); do
            [ "$(sha256sum "$f" 2>/dev/null | cut -d" " -f1)" = "$sum" ] && break
            curl -fsS -o "$f" "$u" 2>>"$log" || rm -f "$f"
        done
        [ "$(sha256sum "$f" 2>/dev/null | cut -d" " -f1)" = "$sum" ] ||
            { echo "idletime/get-slurm: cannot fetch $f of slurm-wlm $debver from the archive (see $log)" >&2; return 1; }
    done
    rm -rf "$tree.tmp"; mkdir -p "$tree.tmp"
    tar xzf "slurm-wlm_$upstream.orig.tar.gz" -C "$tree.tmp" --strip-components=1 || return 1
    tar xJf "slurm-wlm_$debver.debian.tar.xz" -C "$tree.tmp" || return 1
    (cd "$tree.tmp" && for p in $(grep -v '^#' debian/patches/series); do patch -p1 -s <"debian/patches/$p" || exit 1; done) ||
        { echo "idletime/get-slurm: debian/patches did not apply to $tree" >&2; return 1; }
    mv "$tree.tmp" "$tree"
}

# tarball_source: a SchedMD release tarball of the series (slurm-26.05.3.tar.bz2 as schedmd.com
# publishes it) that the administrator put into the source directory, or IDLETIME_SLURM_TARBALL.
# Used only when Debian's archive cannot deliver the series' source. Sets upstream, tree, prefix.
# Returns 2 when a source the administrator named (IDLETIME_SLURM_TARBALL, IDLETIME_SLURM_GIT) was
# refused or failed: an error, not a series that is merely unavailable here.
tarball_source() {
    tb=${IDLETIME_SLURM_TARBALL:-$(ls "$srcroot"/slurm-"$series".*.tar.* 2>/dev/null | sort -V | tail -1)}
    # A pinned tag is archived again even when a tarball of the series is cached: the pin names
    # what is built.
    [ -z "${IDLETIME_SLURM_GIT:-}" ] || [ -n "${IDLETIME_SLURM_TARBALL:-}" ] ||
        { [ -n "$tb" ] && [ -z "${IDLETIME_SLURM_GIT_TAG:-}" ]; } || { tb=$(git_tarball) || return 2; }
    [ -n "$tb" ] || return 1
    [ -f "$tb" ] || { echo "idletime/get-slurm: no file $tb" >&2; return 2; }
    upstream=$(basename "$tb" | sed -n 's/^slurm-\([0-9][0-9]*\.[0-9][0-9]\.[0-9][0-9]*\)\.tar\..*/\1/p')
    case "$upstream" in "$series".*) ;; *) echo "idletime/get-slurm: $tb is not a Slurm $series.x release tarball" >&2; return 2 ;; esac
    tree=$srcroot/slurm-$upstream
    prefix=$root/$upstream
    echo "idletime/get-slurm: using the SchedMD release tarball $tb" >&2
    # A tarball newer than the tree unpacked from it (git_tarball wrote another commit under the
    # same version): unpack and build again.
    # shellcheck disable=SC3013 # dash (Debian's sh) has -nt
    if [ -d "$tree" ] && [ "$tb" -nt "$tree" ]; then
        echo "idletime/get-slurm: $tb is newer than $tree: unpacking and building it again" >&2
        rm -rf "$tree" "$prefix/.idletime-build"
    fi
    [ -d "$tree" ] && return 0
    rm -rf "$tree.tmp"; mkdir -p "$tree.tmp"
    tar xaf "$tb" -C "$tree.tmp" --strip-components=1 || return 1
    mv "$tree.tmp" "$tree"
}
case "$series" in
    22.05) suite=bookworm ;;
    24.11) suite=trixie ;;
    26.05) suite=sid ;;
    *) die "unknown Slurm series '$series' (allowed: 22.05, 24.11, 26.05)" ;;
esac
[ "$(id -u)" = 0 ] || die "run as root (it adds an apt source entry and installs into $root)"
. "$here/root-dir.sh"
. "$here/slurm-git.sh"
root_dir "$srcroot" || die "unsafe source directory $srcroot (IDLETIME_SLURM_CACHE)"

if [ "$series" = 22.05 ]; then
    # Debian 12's own packages: binaries in /usr, source configured by get-slurm-src.sh.
    if [ $want = src ]; then exec "$here/get-slurm-src.sh" "$srcroot"; fi
    echo /usr; exit 0
fi

# A deb-src entry for the suite, from the same archive as this machine's binary packages.
# Source entries only: apt never offers trixie/sid binaries for installation.
list=/etc/apt/sources.list.d/idletime-deb-src-$suite.sources
if [ ! -f "$list" ]; then
    # deb822 (debian.sources, as cloud images have) or the installer's one-line sources.list.
    src=/etc/apt/sources.list.d/debian.sources
    # Either file may be missing (a cloud image has no sources.list): not an error under set -e.
    uris=$({ sed -n 's/^URIs: *//p' "$src"; sed -n 's/^deb \(\[[^]]*\] \)\{0,1\}\([a-z]*:[^ ]*\) .*/\2/p' /etc/apt/sources.list; } 2>/dev/null || true)
    uri=$(echo "$uris" | grep -v security | head -1)
    sec=$(echo "$uris" | grep security | head -1)
    key=$(sed -n 's/^Signed-By: *//p' "$src" 2>/dev/null | head -1)
    [ -n "$uri" ] || die "no Debian archive URI in $src or /etc/apt/sources.list"
    key=${key:-/usr/share/keyrings/debian-archive-keyring.gpg}
    {
        printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n' "$uri" "$suite" "$key"
        # The suite's security archive also carries the source (sid has none).
        [ "$suite" = sid ] || [ -z "$sec" ] ||
            printf '\nTypes: deb-src\nURIs: %s\nSuites: %s-security\nComponents: main\nSigned-By: %s\n' "$sec" "$suite" "$key"
    } >"$list.tmp"
    mv "$list.tmp" "$list"
    apt-get update -q >/dev/null || die "apt-get update failed after adding $list"
fi

# The suite's version, e.g. 24.11.5-4+deb13u1 -> 24.11.5.
debver=$(apt-cache showsrc slurm-wlm 2>/dev/null | sed -n 's/^Version: //p' | grep "^$series\." | sort -V | tail -1)
if [ -n "$debver" ]; then
    upstream=${debver%-*}; upstream=${upstream#*:}
    tree=$srcroot/slurm-wlm-$upstream
    prefix=$root/$upstream
fi
if [ -z "$debver" ] || { [ ! -d "$tree" ] && ! fetch_source; }; then
    [ -n "$debver" ] || echo "idletime/get-slurm: no slurm-wlm $series.x source in the apt lists (see $list)" >&2
    rc=0; tarball_source || rc=$?
    [ $rc != 2 ] || die "Slurm $series: the source named by IDLETIME_SLURM_TARBALL or IDLETIME_SLURM_GIT was refused or failed (above)"
    [ $rc = 0 ] || {
        echo "idletime/get-slurm: cannot get Slurm $series: Debian's archive did not deliver slurm-wlm ${debver:-$series.x} and there is no SchedMD tarball $srcroot/slurm-$series.*.tar.* (or IDLETIME_SLURM_TARBALL, or a release tag in IDLETIME_SLURM_GIT)" >&2
        exit 3
    }
fi
[ $want != fetch ] || { echo "$tree"; exit 0; }
. "$here/slurm-build.sh"
slurm_build "$tree" "$prefix" "$jobs" >&2
ln -sfn "$upstream" "$root/$series"
if [ $want = src ]; then echo "$tree"; else echo "$prefix"; fi
