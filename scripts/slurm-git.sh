# shellcheck shell=sh
# git_tarball for get-slurm.sh (sourced): a SchedMD release tarball written from a release tag of
# a local clone, for when Debian's archive cannot deliver a Slurm series. Reads series (22.05,
# 24.11 or 26.05), srcroot (the source directory), IDLETIME_SLURM_GIT and IDLETIME_SLURM_GIT_TAG;
# needs root_dir (root-dir.sh). Tested by testsuite/tools/slurm-git.test.

# git_tarball: the newest release tag of the series in IDLETIME_SLURM_GIT (release tags only:
# slurm-26-05-3-1, not -0rc1), or the tag IDLETIME_SLURM_GIT_TAG names (the one the administrator
# verified), archived into the source directory as its release tarball would be named; prints its
# path. The clone is trusted like a tarball (its tree is built as root), so everything git reads
# must be root's alone: the clone and its parent (root_dir), and its whole git directory (owned by
# root, writable by no group or other user, no symlink, no alternates, no include of another
# config file). git runs with an empty environment (no GIT_DIR or other GIT_* of the caller, no
# sudo variables) and without any user's or the system's configuration. Once written, the tarball
# is what later calls use: remove it to take a newer tag.
# shellcheck disable=SC2154 # series and srcroot are the caller's (get-slurm.sh)
git_tarball() {
    g=$IDLETIME_SLURM_GIT
    [ -d "$g" ] || { echo "idletime/get-slurm: IDLETIME_SLURM_GIT=$g is not a local directory" >&2; return 1; }
    root_dir "$g" || return 1
    sgit() { env -i PATH=/usr/bin:/bin HOME=/nonexistent GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
        GIT_CEILING_DIRECTORIES="$(dirname "$g")" git -C "$g" "$@"; }
    git_dir_trusted || return 1
    if [ -n "${IDLETIME_SLURM_GIT_TAG:-}" ]; then
        tag=$IDLETIME_SLURM_GIT_TAG
        case $tag in
            *[!a-z0-9-]*) tag= ;;
            "slurm-$(echo "$series" | tr . -)-"*-1) ;;
            *) tag= ;;
        esac
        echo "$tag" | grep -qxE "slurm-[0-9]+-[0-9]+-[0-9]+-1" ||
            { echo "idletime/get-slurm: IDLETIME_SLURM_GIT_TAG=$IDLETIME_SLURM_GIT_TAG is not a Slurm $series release tag (slurm-$(echo "$series" | tr . -)-P-1)" >&2; return 1; }
        sgit rev-parse -q --verify "refs/tags/$tag^{commit}" >/dev/null ||
            { echo "idletime/get-slurm: no tag $tag in $g" >&2; return 1; }
    else
        tag=$(sgit tag -l "slurm-$(echo "$series" | tr . -)-*-1" | grep -E '^slurm-[0-9]+-[0-9]+-[0-9]+-1$' | sort -V | tail -1)
        [ -n "$tag" ] || { echo "idletime/get-slurm: no Slurm $series release tag in $g" >&2; return 1; }
    fi
    ver=$(echo "$tag" | sed 's/^slurm-\([0-9]*\)-\([0-9]*\)-\([0-9]*\)-1$/\1.\2.\3/')
    out=$srcroot/slurm-$ver.tar.bz2
    echo "idletime/get-slurm: writing $out from tag $tag (commit $(sgit rev-parse "refs/tags/$tag^{commit}")) of $g" >&2
    rm -f "$out.tmp" "$out.tmp.bz2"
    sgit -c tar.umask=022 archive --format=tar --prefix="slurm-$ver/" -o "$out.tmp" "refs/tags/$tag" && bzip2 -1 "$out.tmp" ||
        { rm -f "$out.tmp" "$out.tmp.bz2"; echo "idletime/get-slurm: git archive of $tag failed" >&2; return 1; }
    # The same tarball as the one there (the same commit): keep that one, and with it the tree
    # and the build made from it (get-slurm.sh rebuilds from a tarball newer than its tree).
    if [ -f "$out" ] && cmp -s "$out.tmp.bz2" "$out"; then
        rm -f "$out.tmp.bz2"
    else
        mv "$out.tmp.bz2" "$out" || { rm -f "$out.tmp.bz2"; return 1; }
    fi
    echo "$out"
}

# git_dir_trusted: the git directory of $g is $g/.git (a directory, not a .git file pointing
# elsewhere) or $g itself (bare), and nothing in it is another user's, group- or world-writable, a
# symlink, an alternates or commondir file (objects or refs read from elsewhere) or a config
# include. Checked before git reads any of it; then git must agree on where it is.
git_dir_trusted() {
    if [ -e "$g/.git" ] || [ -L "$g/.git" ]; then
        [ -d "$g/.git" ] && [ ! -L "$g/.git" ] ||
            { echo "idletime/get-slurm: $g/.git is not a directory (a .git file points elsewhere): refused" >&2; return 1; }
        gd=$(cd "$g/.git" && pwd -P) && root_dir "$gd" || return 1
    elif [ -f "$g/HEAD" ]; then
        gd=$(cd "$g" && pwd -P)
    else
        echo "idletime/get-slurm: $g is not a git repository" >&2; return 1
    fi
    bad=$(find "$gd" \( -type l -o ! -user 0 -o -perm /022 \) -print -quit 2>&1) || bad="$gd (find failed: $bad)"
    [ -z "$bad" ] || { echo "idletime/get-slurm: $bad: a symlink, another user's, or writable by group or others: refusing $g (chown -R root:root and chmod -R go-w it)" >&2; return 1; }
    for f in objects/info/alternates objects/info/http-alternates commondir; do
        [ ! -e "$gd/$f" ] || { echo "idletime/get-slurm: $gd reads from elsewhere ($f): refused (git repack -a -d, then remove $f)" >&2; return 1; }
    done
    [ -z "$(env -i PATH=/usr/bin:/bin HOME=/nonexistent GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
        git config --file "$gd/config" --no-includes --name-only --get-regexp '^include(if)?\.' 2>/dev/null)" ] ||
        { echo "idletime/get-slurm: $gd/config includes another file: refused" >&2; return 1; }
    [ "$(sgit rev-parse --absolute-git-dir 2>/dev/null)" = "$gd" ] ||
        { echo "idletime/get-slurm: git does not read $g from $gd: refused" >&2; return 1; }
}
