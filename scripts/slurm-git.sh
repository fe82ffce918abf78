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
    [ ! -d "$g/.git" ] || [ -L "$g/.git" ] || root_dir "$g/.git" || return 1
    sgit() { env -i PATH=/usr/bin:/bin HOME=/nonexistent GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null \
        GIT_CEILING_DIRECTORIES="$(dirname "$g")" git -C "$g" "$@"; }
    git_dir_trusted || return 1
    if [ -n "${IDLETIME_SLURM_GIT_TAG:-}" ]; then
        tag=$IDLETIME_SLURM_GIT_TAG
        echo "$tag" | grep -qE "^slurm-$(echo "$series" | tr . -)-[0-9]+-1\$" ||
            { echo "idletime/get-slurm: IDLETIME_SLURM_GIT_TAG=$tag is not a Slurm $series release tag (slurm-$(echo "$series" | tr . -)-P-1)" >&2; return 1; }
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
    sgit -c tar.umask=022 archive --format=tar --prefix="slurm-$ver/" -o "$out.tmp" "refs/tags/$tag" && bzip2 -1 "$out.tmp" &&
        mv "$out.tmp.bz2" "$out" || { rm -f "$out.tmp" "$out.tmp.bz2"; echo "idletime/get-slurm: git archive of $tag failed" >&2; return 1; }
    echo "$out"
}

# git_dir_trusted: the git directory of $g is $g itself (bare) or $g/.git (not a .git file
# pointing elsewhere), and nothing in it is another user's, group- or world-writable, a symlink,
# an alternates file (objects read from elsewhere) or a config include.
git_dir_trusted() {
    gd=$(sgit rev-parse --absolute-git-dir 2>/dev/null) ||
        { echo "idletime/get-slurm: $g is not a git repository" >&2; return 1; }
    case $gd in
        "$(cd "$g" && pwd -P)" | "$(cd "$g" && pwd -P)/.git") ;;
        *) echo "idletime/get-slurm: the git directory of $g is $gd, outside it: refused" >&2; return 1 ;;
    esac
    [ ! -L "$g/.git" ] && { [ ! -e "$g/.git" ] || [ -d "$g/.git" ]; } ||
        { echo "idletime/get-slurm: $g/.git is not a directory: refused" >&2; return 1; }
    bad=$(find "$gd" \( -type l -o ! -user 0 -o -perm /022 \) -print -quit 2>&1) || bad="$gd (find failed: $bad)"
    [ -z "$bad" ] || { echo "idletime/get-slurm: $bad: a symlink, another user's, or writable by group or others: refusing $g" >&2; return 1; }
    [ ! -e "$gd/objects/info/alternates" ] && [ ! -e "$gd/objects/info/http-alternates" ] ||
        { echo "idletime/get-slurm: $gd reads objects from elsewhere (objects/info/alternates): refused" >&2; return 1; }
    [ -z "$(sgit config --local --name-only --get-regexp '^include(if)?\.' 2>/dev/null)" ] ||
        { echo "idletime/get-slurm: $gd/config includes another file: refused" >&2; return 1; }
}
