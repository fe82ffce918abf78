#!/bin/sh
# The README's first command: on a fresh Debian 12 machine (root) installs what is needed, builds
# and installs idletime, starts a local Slurm cluster (etc/demo.json: one A100 pool shared by two
# teams) and runs the demo scenario (demo/run.sh). Exit 0 only if the demo saw every behaviour.
# Usage: scripts/demo.sh [--keep]   (--keep leaves the demo cluster running afterwards)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
keep=no
[ "${1:-}" = --keep ] && keep=yes
"$top/scripts/install-deps.sh"
"$top/scripts/build.sh" "$top/_build"
make -C "$top/_build" install >/dev/null
ldconfig
export IDLETIME_CLUSTER_PORT_BASE=${IDLETIME_CLUSTER_PORT_BASE:-15800}
dir=/var/tmp/idletime-demo-cluster
"$top/testsuite/cluster/start.sh" --dir "$dir" --config "$top/etc/demo.json"
export SLURM_CONF="$dir/etc/slurm.conf"
rc=0
"$top/demo/run.sh" || rc=$?
if [ "$keep" = yes ]; then
    echo "demo cluster left running: export SLURM_CONF=$SLURM_CONF; stop: testsuite/cluster/stop.sh --dir $dir"
else
    "$top/testsuite/cluster/stop.sh" --dir "$dir" >/dev/null
fi
exit $rc
