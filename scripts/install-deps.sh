#!/bin/sh
# Install every Debian 12 package idletime needs to build, run its tests and its demo.
# Usage: scripts/install-deps.sh [--no-demo]   (run as root; idempotent)
set -eu
export DEBIAN_FRONTEND=noninteractive
BUILD="build-essential autoconf autoconf-archive automake libtool pkg-config g++ libslurm-dev libjson-c-dev
  libhwloc-dev libmunge-dev libssl-dev libxxhash-dev check clang libclang-rt-14-dev dpkg-dev
  debhelper dh-python lintian libmariadb-dev"
RUNTIME="slurmctld slurmd slurmdbd slurm-client munge mariadb-server hwloc"
TEST="python3 python3-numpy gnuplot-nox bc procps psmisc jq util-linux coreutils xxhash
  prometheus curl python3-venv python3-setuptools git bzip2"
DEMO="python3-torch python3-sklearn"
PKGS="$BUILD $RUNTIME $TEST"
[ "${1:-}" = "--no-demo" ] || PKGS="$PKGS $DEMO"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "idletime/install-deps: installing:$missing"
  apt-get update -q
  # Daemons are started by testsuite/cluster, never by the package scripts.
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod 755 /usr/sbin/policy-rc.d
  apt-get install -y -q --no-install-recommends $missing
  rm -f /usr/sbin/policy-rc.d
fi
echo "idletime/install-deps: all packages present"
