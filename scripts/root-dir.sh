# shellcheck shell=sh
# root_dir DIR: creates DIR (mode 755) when missing and fails unless DIR and its parent are
# directories owned by root that no group or other user may write: the scripts that source this
# run as root and build, configure and install what they find in DIR, so a local user must not be
# able to plant a tree, a tarball or a symlink there (a /var/tmp path could be created first by
# anyone). Sourced by get-slurm.sh and get-slurm-src.sh.
root_dir() {
    mkdir -p -m 755 "$1" || return 1
    for _d in "$1" "$(dirname "$1")"; do
        # stat -L would follow a symlink planted in place of DIR: refuse links outright.
        if [ -L "$_d" ] || [ ! -d "$_d" ]; then
            echo "idletime: $_d is not a plain directory: refusing to build from it" >&2; return 1
        fi
        set -- "$1" "$(stat -c '%u %A' "$_d")"
        case "$2" in
            "0 d"????[!w]??[!w]*) ;;
            *) echo "idletime: $_d must be owned by root and writable by root only (stat: $2): refusing to build from it" >&2; return 1 ;;
        esac
    done
}
