# shellcheck shell=sh
# git_tarball for get-slurm.sh (sourced): a SchedMD release tarball written from a release tag of
# a local clone, for when Debian's archive cannot deliver a Slurm series. Reads series (22.05,
# 24.11 or 26.05), srcroot (the source directory) and IDLETIME_SLURM_GIT; needs root_dir
# (root-dir.sh). Tested by testsuite/tools/slurm-git.test.

# git_tarball: the newest release tag of the series in IDLETIME_SLURM_GIT (release tags only:
# slurm-26-05-3-1, not -0rc1), archived into the source directory as its release tarball would be
# named; prints its path. The clone is trusted like a tarball (its tree is built as root), so it
# must be a local directory that only root may write, as the source directory must; git runs
# without any user's or the system's configuration and without sudo's user (git 2.39 accepts a
# repository owned by SUDO_UID). Once written, the tarball is what later calls use: remove it to
# take a newer tag.
# shellcheck disable=SC2154 # series and srcroot are the caller's (get-slurm.sh)
git_tarball() {
    g=$IDLETIME_SLURM_GIT
    [ -d "$g" ] || { echo "idletime/get-slurm: IDLETIME_SLURM_GIT=$g is not a local directory" >&2; return 1; }
    root_dir "$g" || return 1
    [ ! -d "$g/.git" ] || root_dir "$g/.git" || return 1
    sgit() { env -u SUDO_UID -u SUDO_USER -u SUDO_GID GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null git -C "$g" "$@"; }
    tag=$(sgit tag -l "slurm-$(echo "$series" | tr . -)-*-1" | grep -E '^slurm-[0-9]+-[0-9]+-[0-9]+-1$' | sort -V | tail -1)
    [ -n "$tag" ] || { echo "idletime/get-slurm: no Slurm $series release tag in $g" >&2; return 1; }
    ver=$(echo "$tag" | sed 's/^slurm-\([0-9]*\)-\([0-9]*\)-\([0-9]*\)-1$/\1.\2.\3/')
    out=$srcroot/slurm-$ver.tar.bz2
    echo "idletime/get-slurm: writing $out from tag $tag of $g" >&2
    rm -f "$out.tmp" "$out.tmp.bz2"
    sgit archive --format=tar --prefix="slurm-$ver/" -o "$out.tmp" "$tag" && bzip2 -1 "$out.tmp" &&
        mv "$out.tmp.bz2" "$out" || { rm -f "$out.tmp" "$out.tmp.bz2"; echo "idletime/get-slurm: git archive of $tag failed" >&2; return 1; }
    echo "$out"
}
