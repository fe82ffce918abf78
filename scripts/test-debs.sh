#!/bin/sh
# Installs idletime's Debian packages with apt-get, checks the installed tools, then purges them
# (scripts/test-purge.sh) -- all inside a private mount namespace whose /usr, /etc and /var are
# overlays on tmpfs, so nothing outside sees the packages: a /usr/local install (the cluster tests'
# one, or another checkout's) is neither shadowed nor touched, and the machine's dpkg database stays
# as it was. Before that it lists each packaged path that already exists on the machine.
# Usage: scripts/test-debs.sh DEB...   (root, Debian 12; from scripts/build-debs.sh). Exit 0 when clean.
# Env: IDLETIME_DEB_CLUSTER_TESTS: cluster test name patterns (testsuite/cluster/run-tests.sh) to run,
# while the packages are installed, on a local cluster that uses only the packages' files.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
[ $# -gt 0 ] || { echo "usage: $0 DEB..." >&2; exit 2; }
debs=""; pkgs=""
for f in "$@"; do
	case $f in /*) ;; *) f=$PWD/$f ;; esac
	debs="$debs $f"; pkgs="$pkgs $(dpkg-deb -f "$f" Package)"
done
# Paths the packages would overwrite on this machine (directories aside).
clash=0
for f in $debs; do
	for p in $(dpkg-deb -c "$f" | awk '$1 !~ /^d/ {sub(/^\./, "", $6); print $6}'); do
		[ -e "$p" ] || continue
		echo "idletime/test-debs: $(basename "$f") would overwrite $p ($(dpkg -S "$p" 2>/dev/null || echo 'owned by no package'))"
		clash=1
	done
done
[ "$clash" = 0 ] && echo "idletime/test-debs: the packages overwrite no existing file"
ov=$(mktemp -d /tmp/idletime-test-debs.XXXXXX)
trap 'rmdir "$ov" 2>/dev/null || true' EXIT
# shellcheck disable=SC2016 # expanded by the inner shell
unshare -m --propagation private sh -euc '
	ov=$1; top=$2; debs=$3; pkgs=$4; tests=$5
	mount -t tmpfs idletime-test-debs "$ov"
	for d in usr etc var; do
		mkdir -p "$ov/$d.up" "$ov/$d.work"
		mount -t overlay overlay -o "lowerdir=/$d,upperdir=$ov/$d.up,workdir=$ov/$d.work" "/$d"
	done
	# Hide a /usr/local install (it comes first in PATH, sys.path and the loader): the checks
	# below must find the packaged files.
	mount -t tmpfs idletime-test-debs-usr-local /usr/local
	ldconfig
	# shellcheck disable=SC2086 # word lists
	# The state directory of idletime-ft-hook goes to the SlurmUser of /etc/slurm/slurm.conf (this
	# /etc is the overlay): first a SlurmUser that exists, then (postinst rerun) one that does not.
	mkdir -p /etc/slurm
	printf "ClusterName=debs\n  slurmuser = slurm # as Debian runs it\n" >/etc/slurm/slurm.conf
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q $debs >/dev/null
	echo "idletime/test-debs: installed:$pkgs"
	owner=$(stat -c %U:%G /var/lib/idletime)
	[ "$owner" = slurm:slurm ] || { echo "idletime/test-debs: /var/lib/idletime is $owner, not SlurmUser slurm:slurm" >&2; exit 1; }
	rmdir /var/lib/idletime
	echo "SlurmUser=nosuchuser-idletime" >/etc/slurm/slurm.conf
	msg=$(/var/lib/dpkg/info/idletime.postinst configure 2>&1)
	case $msg in *"SlurmUser '\''nosuchuser-idletime'\'' of /etc/slurm/slurm.conf is not a user"*) ;;
		*) echo "idletime/test-debs: postinst with an unknown SlurmUser said: $msg" >&2; exit 1 ;; esac
	[ "$(stat -c %U /var/lib/idletime)" = root ] || { echo "idletime/test-debs: unknown SlurmUser: /var/lib/idletime not root-owned" >&2; exit 1; }
	echo "idletime/test-debs: /var/lib/idletime created for SlurmUser slurm; root-owned with a warning for an unknown SlurmUser"
	/usr/bin/idletime --version
	test -x /usr/sbin/idletime-exporter
	for u in idletime-exporter.service idletime-exporter-textfile.service idletime-exporter-textfile.timer; do
		[ -f "/lib/systemd/system/$u" ] || [ -f "/usr/lib/systemd/system/$u" ] || { echo "idletime/test-debs: no systemd unit $u" >&2; exit 1; }
	done
	ls /usr/lib/idletime/slurm/*.so >/dev/null
	PYTHONPATH= /usr/bin/python3 -I -c "import idletime, sys; assert idletime.__file__.startswith(\"/usr/lib/python3/dist-packages/\"), idletime.__file__"
	pkg-config --exists idletime-ckpt
	if [ -n "$tests" ]; then
		# A local cluster that takes its plugins, hook and tools from the package paths (/usr) only:
		# /usr/local is hidden above.
		echo "idletime/test-debs: cluster tests against the installed packages: $tests"
		export PREFIX=/usr IDLETIME_PREFIX=/usr IDLETIME_BIN=/usr/bin/idletime START_ARGS="--prefix /usr" \
			IDLETIME_CLUSTER_DIR=/var/tmp/idletime-test-debs IDLETIME_CLUSTER_PORT_BASE=31000
		rc=0
		# shellcheck disable=SC2086 # word list
		"$top/testsuite/cluster/run-tests.sh" $tests || rc=1
		grep -q "^PluginDir=/usr/lib/idletime/slurm:" "$IDLETIME_CLUSTER_DIR/etc/slurm.conf" ||
			{ echo "idletime/test-debs: the cluster did not take the packaged plugins: $(grep -i '^PluginDir' "$IDLETIME_CLUSTER_DIR/etc/slurm.conf")" >&2; rc=1; }
		"$top/testsuite/cluster/stop.sh" >/dev/null 2>&1 || true
		[ "$rc" = 0 ] || { echo "idletime/test-debs: cluster tests failed against the packages" >&2; exit 1; }
	fi
	# shellcheck disable=SC2086
	"$top/scripts/test-purge.sh" $pkgs
' sh "$ov" "$top" "$debs" "$pkgs" "${IDLETIME_DEB_CLUSTER_TESTS:-}"
if [ -x /usr/local/bin/idletime ]; then
	printf 'idletime/test-debs: /usr/local unchanged: '; /usr/local/bin/idletime --version
fi
