#!/bin/bash
# Start the local Slurm cluster (munged, MariaDB, slurmdbd, slurmctld, one slurmd per node) on
# loopback, configured from an idletime JSON config through `idletime render`. Idempotent.
# Usage: start.sh [--config FILE] [--prefix DIR] [--slurm PREFIX] [--dir STATEDIR] [--no-plugins] [--no-idletime] [--extra-conf FILE]... [--cgroup-conf FILE]
# --slurm PREFIX: run every Slurm daemon and command from a Slurm installed into PREFIX
# (scripts/get-slurm.sh; default Debian's packages in /usr); it is remembered in the state dir.
# --no-idletime: a site before idletime (t-site-adopt): --no-plugins, and neither the rendered
# partitions nor idletime's QOS, accounts or test users; the site's partitions come from --extra-conf.
set -euo pipefail
# shellcheck source=common.sh
. "$(dirname "$0")/common.sh"

usage() {
	echo "usage: $0 [--config FILE] [--prefix DIR] [--slurm PREFIX] [--dir STATEDIR] [--no-plugins] [--no-idletime] [--extra-conf FILE]... [--cgroup-conf FILE]" >&2
	exit 2
}

CONFIG=
PREFIX=${PREFIX:-/usr/local}
PLUGINS=1
SITE_ONLY=0
SLURM_ARG=${IDLETIME_SLURM:-}
EXTRA=()
CGROUP_CONF=
while [ $# -gt 0 ]; do
	case $1 in
	--config) CONFIG=${2:?}; shift 2 ;;
	--config=*) CONFIG=${1#*=}; shift ;;
	--prefix) PREFIX=${2:?}; shift 2 ;;
	--prefix=*) PREFIX=${1#*=}; shift ;;
	--slurm) SLURM_ARG=${2:?}; shift 2 ;;
	--slurm=*) SLURM_ARG=${1#*=}; shift ;;
	--dir) IC_DIR=${2:?}; shift 2 ;;
	--dir=*) IC_DIR=${1#*=}; shift ;;
	--no-plugins) PLUGINS=0; shift ;;
	--no-idletime) PLUGINS=0; SITE_ONLY=1; shift ;;
	--extra-conf) EXTRA+=("${2:?}"); shift 2 ;;
	--extra-conf=*) EXTRA+=("${1#*=}"); shift ;;
	--cgroup-conf) CGROUP_CONF=${2:?}; shift 2 ;;
	--cgroup-conf=*) CGROUP_CONF=${1#*=}; shift ;;
	-h | --help) usage ;;
	*) echo "idletime/cluster: unknown argument '$1'" >&2; usage ;;
	esac
done
[ "$(id -u)" = 0 ] || ic_die "must run as root (it creates users and starts daemons)"
case $IC_DIR in /*) ;; *) IC_DIR=$PWD/$IC_DIR ;; esac
ic_layout
# Created before it is checked: once root's, under a root-only or sticky parent, no one can put
# another directory in its place (one checked while missing could be planted before the mkdir).
# shellcheck disable=SC2174 # -m for the state dir itself; parents get the default (root, umask)
mkdir -p -m 755 -- "$IC_DIR" 2>/dev/null || true
ic_state_dir_safe || ic_die "state dir $IC_DIR could not be created"
T0=$(date +%s%N)
# Which Slurm: --slurm, else the one this state dir ran last, else Debian's (ic_slurm_use).
[ -n "$SLURM_ARG" ] || SLURM_ARG=$(cat "$IC_DIR/etc/slurm-prefix" 2>/dev/null || true)
ic_slurm_use "${SLURM_ARG:-/usr}"

# ---- config and rendering --------------------------------------------------------------------
REPO=$(cd "$IC_SRC/../.." && pwd)
if [ -z "$CONFIG" ]; then
	CONFIG=$REPO/etc/idletime.json
fi
[ -f "$CONFIG" ] || { echo "idletime/cluster: config '$CONFIG' does not exist" >&2; exit 2; }
CONFIG=$(cd "$(dirname "$CONFIG")" && pwd)/$(basename "$CONFIG")
# The checkpoint root as doc/admin-guide.md has the administrator make it: root-owned, 0755
# (spank/idletime refuses anything else; this also repairs a root an interrupted test left behind).
CKPT_ROOT=$(jq -r '.idle.checkpoint_root // empty' "$CONFIG" 2>/dev/null || true)
case $CKPT_ROOT in /*) install -d -o root -g root -m 0755 "$CKPT_ROOT" ;; esac
for f in "${EXTRA[@]}"; do
	[ -f "$f" ] || { echo "idletime/cluster: --extra-conf '$f' does not exist" >&2; exit 2; }
done
[ -z "$CGROUP_CONF" ] || [ -f "$CGROUP_CONF" ] || { echo "idletime/cluster: --cgroup-conf '$CGROUP_CONF' does not exist" >&2; exit 2; }
IDLETIME_BIN=${IDLETIME_BIN:-$PREFIX/bin/idletime}

mkdir -p "$IC_ETC/render" "$IC_RUN" "$IC_LOGD" "$IC_BIN" "$IC_SPOOL" "$IC_GPU" "$IC_DIR/out"
chmod 755 "$IC_DIR" "$IC_ETC" "$IC_BIN"
chmod 1777 "$IC_DIR/out"
# A state dir belongs to one Slurm: slurmdbd converts the database and slurmctld its state files
# to its own release, and an older one cannot read them back.
PREV_SLURM=$(cat "$IC_ETC/slurm-prefix" 2>/dev/null || true)
[ -n "$PREV_SLURM" ] || [ ! -d "$IC_MYSQL/data/mysql" ] || PREV_SLURM=/usr
[ -z "$PREV_SLURM" ] || [ "$PREV_SLURM" = "$IC_SLURM" ] ||
	ic_die "state dir $IC_DIR ran the Slurm in $PREV_SLURM, not $IC_SLURM: use another --dir (or stop.sh --dir $IC_DIR and remove it)"
echo "$IC_SLURM" >"$IC_ETC/slurm-prefix"

[ -x "$IDLETIME_BIN" ] ||
	ic_die "no idletime tool at '$IDLETIME_BIN' (run make install, or set IDLETIME_BIN / --prefix)"
# render SECTION OUTFILE: one section of `idletime render`.
render() {
	"$IDLETIME_BIN" render --section="$1" "$CONFIG" >"$2.tmp" 2>"$2.err" || {
		ic_log "'$IDLETIME_BIN render --section=$1 $CONFIG' failed:"
		cat "$2.err" >&2
		exit 2
	}
	mv "$2.tmp" "$2"
}
R=$IC_ETC/render
for s in nodes partitions gres sacctmgr; do render "$s" "$R/$s"; done

# Nodes: NAME GPUTYPE GPUCOUNT, one per line, from the nodes section.
NODES=()
declare -A GPU_TYPE GPU_COUNT NODE_LINE
while read -r line; do
	case $line in NodeName=*) ;; *) continue ;; esac
	name=${line%% *}; name=${name#NodeName=}
	gres=$(tr ' ' '\n' <<<"$line" | sed -n 's/^Gres=//p')
	GPU_TYPE[$name]=; GPU_COUNT[$name]=0
	IFS=':' read -r -a g <<<"${gres%%,*}"
	if [ "${g[0]:-}" = gpu ]; then
		if [ ${#g[@]} -ge 3 ]; then GPU_TYPE[$name]=${g[1]}; GPU_COUNT[$name]=${g[2]}; else GPU_COUNT[$name]=${g[1]:-0}; fi
	fi
	NODES+=("$name")
	NODE_LINE[$name]="$line NodeAddr=127.0.0.1 Port=$((IC_PORT_SLURMD0 + ${#NODES[@]} - 1))"
done <"$R/nodes"
[ ${#NODES[@]} -gt 0 ] || ic_die "render --section=nodes printed no NodeName= line"

# ---- configuration files -------------------------------------------------------------------
write_slurm_conf() {
	local n
	cat <<EOF
# Generated by testsuite/cluster/start.sh from $CONFIG. Do not edit: rerun start.sh.
ClusterName=$IC_CLUSTER
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$IC_PORT_CTLD
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$IC_SOCK
CredType=cred/munge
StateSaveLocation=$IC_SPOOL/slurmctld
SlurmdSpoolDir=$IC_SPOOL/slurmd-%n
SlurmctldPidFile=$IC_RUN/slurmctld.pid
SlurmdPidFile=$IC_RUN/slurmd-%n.pid
SlurmctldLogFile=$IC_LOGD/slurmctld.log
SlurmdLogFile=$IC_LOGD/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
# Schedule a batch job at submission (default: up to 3 s later); measured in doc/design/notice-and-release.md.
SchedulerParameters=batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
ReturnToService=2
SlurmdParameters=config_overrides
MailProg=/bin/true
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$IC_PORT_DBD
AccountingStoragePass=$IC_SOCK
AccountingStorageEnforce=associations,limits,qos
SlurmctldParameters=preempt_send_user_signal
EOF
	[ -z "$FT_HOOK" ] || echo "EpilogSlurmctld=$FT_HOOK"
	if [ -n "$PLUGIN_DIR" ]; then
		echo "PluginDir=$PLUGIN_DIR:$IC_SLURM_PLUGINS"
		[ ! -f "$PLUGIN_DIR/job_submit_idletime.so" ] || echo "JobSubmitPlugins=idletime"
		[ ! -f "$PLUGIN_DIR/spank_idletime.so" ] || echo "PlugStackConfig=$IC_ETC/plugstack.conf"
	fi
	if [ "$SITE_ONLY" = 0 ]; then
		echo "# ---- idletime render --section=partitions"
		grep -v '^[[:space:]]*#' "$R/partitions" | grep -v '^[[:space:]]*$' || true
	fi
	echo "# ---- nodes (render --section=nodes + loopback address and port)"
	for n in "${NODES[@]}"; do echo "${NODE_LINE[$n]}"; done
	for f in "${EXTRA[@]}"; do
		echo "# ---- --extra-conf $f"
		cat "$f"
	done
}

write_gres_conf() {
	local n
	echo "AutoDetect=off"
	for n in "${NODES[@]}"; do
		[ "${GPU_COUNT[$n]}" -gt 0 ] || continue
		echo "NodeName=$n Name=gpu${GPU_TYPE[$n]:+ Type=${GPU_TYPE[$n]}} File=$IC_GPU/$n/gpu[0-$((GPU_COUNT[$n] - 1))]"
	done
}

[ -f "$IC_ETC/dbpass" ] || (umask 077 && head -c 18 /dev/urandom | base64 | tr -d '/+=' >"$IC_ETC/dbpass")
write_dbd_conf() {
	cat <<EOF
AuthType=auth/munge
AuthInfo=socket=$IC_SOCK
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$IC_PORT_DBD
SlurmUser=root
DebugLevel=info
LogFile=$IC_LOGD/slurmdbd.log
PidFile=$IC_RUN/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$IC_PORT_MYSQL
StorageUser=slurm
StoragePass=$(cat "$IC_ETC/dbpass")
StorageLoc=slurm_acct_db
EOF
}

PLUGIN_DIR=
if [ "$PLUGINS" = 1 ]; then
	d=$PREFIX/lib/idletime/slurm
	if [ -f "$d/job_submit_idletime.so" ] || [ -f "$d/spank_idletime.so" ]; then
		PLUGIN_DIR=$d
	else
		ic_log "no idletime plugins under $d: plain Slurm"
	fi
fi
# A job_submit/idletime built with --with-slurm-src reads the DefaultAccount in slurmctld (it links
# assoc_mgr_fill_in_user): sbatch then skips its account lookup (account_hint=no).
HINT=
! grep -qa assoc_mgr_fill_in_user "$PLUGIN_DIR/job_submit_idletime.so" 2>/dev/null || HINT=" account_hint=no"
[ ! -f "$PLUGIN_DIR/spank_idletime.so" ] ||
	echo "required $PLUGIN_DIR/spank_idletime.so config=$CONFIG munge_socket=$IC_SOCK$HINT" >"$IC_ETC/plugstack.conf"

# Fault-tolerance hook. EpilogSlurmctld takes no arguments and slurmctld gives it no SLURM_CONF:
# a wrapper passes both (libslurm is fatal without a config source).
FT_HOOK=
if [ "$PLUGINS" = 1 ] && [ -x "$PREFIX/sbin/idletime-ft-hook" ]; then
	FT_HOOK=$IC_BIN/idletime-ft-hook-wrapper
	# --last-good: the hook's copy of the last config that loaded (used while CONFIG is invalid).
	printf '#!/bin/sh\nSLURM_CONF=%q; export SLURM_CONF\nexec %q --config %q --log %q --last-good %q\n' "$IC_CONF" \
		"$PREFIX/sbin/idletime-ft-hook" "$CONFIG" "$IC_LOGD/ft-hook.log" "$IC_SPOOL/ft-hook-last-good.json" >"$FT_HOOK.new"
	chmod 755 "$FT_HOOK.new"
	mv "$FT_HOOK.new" "$FT_HOOK"
fi

# Later lines win: one line per key (case-insensitive) and per PartitionName/NodeName, the last
# one kept; slurmctld is fatal on a repeated partition and warns on repeated keys.
dedupe_conf() {
	awk '
	function key(l,  k) {
		if (l ~ /^[ \t]*(#|$)/ || l ~ /^(PartitionName|NodeName)=DEFAULT( |$)/ || l ~ /^[Ii]nclude /) return ""
		if (l ~ /^(PartitionName|NodeName)=/) { split(l, f, /[ \t]+/); return f[1] }
		k = l; sub(/=.*/, "", k); return tolower(k)
	}
	{ line[NR] = $0; k = key($0); if (k != "") last[k] = NR }
	END { for (i = 1; i <= NR; i++) { k = key(line[i]); if (k == "" || last[k] == i) print line[i] } }'
}
write_slurm_conf | dedupe_conf >"$IC_ETC/slurm.conf.new"
# Every client parses slurm.conf: refuse a file they would not read (sacctmgr -V parses, no I/O).
if ! err=$(SLURM_CONF=$IC_ETC/slurm.conf.new sacctmgr -V 2>&1 >/dev/null); then
	ic_log "generated slurm.conf is invalid (kept the old one; new one in $IC_ETC/slurm.conf.new):"
	echo "$err" >&2
	exit 2
fi
write_gres_conf >"$IC_ETC/gres.conf.new"
(umask 077 && write_dbd_conf >"$IC_ETC/slurmdbd.conf")
chmod 644 "$IC_ETC/slurm.conf.new" "$IC_ETC/gres.conf.new"
CHANGED=0
cmp -s "$IC_ETC/slurm.conf.new" "$IC_CONF" || CHANGED=1
cmp -s "$IC_ETC/gres.conf.new" "$IC_ETC/gres.conf" || CHANGED=1
NODES_CHANGED=0
[ -f "$IC_CONF" ] && diff -q <(grep '^NodeName=' "$IC_CONF") <(grep '^NodeName=' "$IC_ETC/slurm.conf.new") >/dev/null ||
	NODES_CHANGED=1
cmp -s "$IC_ETC/gres.conf.new" "$IC_ETC/gres.conf" || NODES_CHANGED=1
# Keys a reconfigure does not apply (measured: PriorityType stayed priority/basic), so a change
# restarts the daemons (the replay switches plugins between its configurations).
RESTART_KEYS='^(PreemptType|PriorityType|PrioritySiteFactorPlugin|SelectType|SchedulerType|AuthType|AuthInfo|PluginDir|JobSubmitPlugins|AccountingStorageType|ProctrackType|TaskPlugin)='
PLUGINS_CHANGED=0
[ -f "$IC_CONF" ] && diff -q <(grep -iE "$RESTART_KEYS" "$IC_CONF") <(grep -iE "$RESTART_KEYS" "$IC_ETC/slurm.conf.new") >/dev/null ||
	PLUGINS_CHANGED=1
# slurmctld got the idletime config path in its environment at launch: another --config restarts it.
[ "$(cat "$IC_ETC/slurmctld-config" 2>/dev/null)" = "$CONFIG" ] || { CHANGED=1; PLUGINS_CHANGED=1; }
# Clients (sacctmgr below) need the file now; a running slurmctld rereads it only on reconfigure.
mv "$IC_ETC/slurm.conf.new" "$IC_CONF"
mv "$IC_ETC/gres.conf.new" "$IC_ETC/gres.conf"
# cgroup.conf (next to slurm.conf, where slurmd and slurmstepd look): only with --cgroup-conf, for a
# ProctrackType or TaskPlugin of the cgroup family given with --extra-conf. Daemons read it at
# start only: a change restarts them.
if [ -n "$CGROUP_CONF" ]; then
	cmp -s "$CGROUP_CONF" "$IC_ETC/cgroup.conf" || { CHANGED=1; PLUGINS_CHANGED=1; }
	install -m 644 "$CGROUP_CONF" "$IC_ETC/cgroup.conf"
elif [ -f "$IC_ETC/cgroup.conf" ]; then
	rm -f "$IC_ETC/cgroup.conf"
	CHANGED=1
	PLUGINS_CHANGED=1
fi

for b in slurmctld slurmd slurmstepd slurmdbd; do ln -sfn "$(ic_slurm_sbin "$b")" "$IC_BIN/$b"; done

# ---- test users ----------------------------------------------------------------------------
ACCOUNTS=$(jq -r '[.. | objects | select(has("accounts")) | .accounts[]?] | unique | .[]' "$CONFIG")
while read -r user _; do
	case $user in '' | '#'*) continue ;; esac
	id -u "$user" >/dev/null 2>&1 || useradd -m -U -s /bin/bash "$user"
done <"$IC_SRC/users.conf"

# ---- daemons -------------------------------------------------------------------------------
munge_ok() { munge -n -S "$IC_SOCK" 2>/dev/null | unmunge -S "$IC_SOCK" >/dev/null 2>&1; }
start_munged() {
	mkdir -p "$IC_MUNGE"
	chmod 755 "$IC_MUNGE"
	[ -s "$IC_MUNGE/munge.key" ] || (umask 077 && dd if=/dev/urandom bs=1024 count=1 of="$IC_MUNGE/munge.key" status=none)
	ic_running munged && munge_ok && return 0
	ic_stop_daemon munged 5
	rm -f "$IC_SOCK" "$IC_SOCK.lock"
	# One munged serves every daemon and client of the cluster (64 slurmd in the scale bench); with
	# munged's default 2 threads, a mass teardown there saw connects refused ("Resource temporarily
	# unavailable": 710 failed RPCs in 2 minutes, kill requests lost). Slurm's high-throughput
	# guide asks for more munged threads on a busy controller.
	ic_launch munged munged -F --num-threads=10 --socket="$IC_SOCK" --key-file="$IC_MUNGE/munge.key" \
		--pid-file="$IC_MUNGE/munged.pid" --log-file="$IC_LOGD/munged.log" --seed-file="$IC_MUNGE/munged.seed"
	ic_await munged 30 munge_ok
}

SQL=(mariadb --no-defaults -S "$IC_MYSQL_SOCK" -u root)
mysql_ok() { mariadb-admin --no-defaults -S "$IC_MYSQL_SOCK" -u root ping >/dev/null 2>&1; }
start_mariadbd() {
	ic_stop_stray_mariadbd  # before its data directory may be initialised again below
	install -d -o mysql -g mysql -m 750 "$IC_MYSQL"
	ln -sfn "$IC_MYSQL/mysqld.log" "$IC_LOGD/mariadbd.log"
	if [ ! -d "$IC_MYSQL/data/mysql" ]; then
		rm -rf "$IC_MYSQL/data" "$IC_ETC/accounting.done"
		# Own tmpdir: parallel clusters' MariaDB temp tables collide in a shared /tmp.
		install -d -o mysql -g mysql -m 750 "$IC_MYSQL/tmp"
		mariadb-install-db --no-defaults --user=mysql --datadir="$IC_MYSQL/data" --tmpdir="$IC_MYSQL/tmp" --skip-test-db \
			--auth-root-authentication-method=socket --skip-name-resolve >"$IC_LOGD/mariadb-install.out" 2>&1 ||
			{ ic_log "mariadb-install-db failed"; tail -n 20 "$IC_LOGD/mariadb-install.out" >&2; exit 1; }
	fi
	if ! { ic_running mariadbd && mysql_ok; }; then
		ic_stop_daemon mariadbd 20
		install -d -o mysql -g mysql -m 750 "$IC_MYSQL/tmp"
		ic_launch mariadbd mariadbd --no-defaults --user=mysql --datadir="$IC_MYSQL/data" --tmpdir="$IC_MYSQL/tmp" --socket="$IC_MYSQL_SOCK" \
			--port="$IC_PORT_MYSQL" --bind-address=127.0.0.1 --skip-name-resolve --pid-file="$IC_MYSQL/mysqld.pid" \
			--log-error="$IC_MYSQL/mysqld.log" --innodb-buffer-pool-size=128M --innodb-log-file-size=64M --innodb-lock-wait-timeout=900 \
			--skip-log-bin --max-connections=200 \
			--innodb-flush-log-at-trx-commit=0 --innodb-doublewrite=0 --innodb-flush-method=nosync
		ic_await mariadbd 60 mysql_ok
	fi
	local pw u
	pw=$(cat "$IC_ETC/dbpass")
	for u in "'slurm'@'127.0.0.1'" "'slurm'@'localhost'"; do
		"${SQL[@]}" -e "CREATE USER IF NOT EXISTS $u IDENTIFIED BY '$pw'; ALTER USER $u IDENTIFIED BY '$pw';
			GRANT ALL ON slurm_acct_db.* TO $u;" || ic_die "cannot create the MariaDB user for slurmdbd"
	done
}

dbd_ok() { sacctmgr -n -P show cluster format=cluster >/dev/null 2>&1; }
start_slurmdbd() {
	ic_running slurmdbd && ic_poll 10 dbd_ok && return 0
	ic_stop_daemon slurmdbd 20
	ic_launch slurmdbd "$IC_BIN/slurmdbd" -D
	ic_await slurmdbd 60 dbd_ok
}

# add_user USER ACCOUNT...: the user's associations, the first account as default.
add_user() {
	local user=$1 acct def=
	shift
	for acct in "$@"; do
		if ! grep -qxF "$acct" <<<"$ACCOUNTS"; then
			ic_log "warning: users.conf: account '$acct' of '$user' is in no quota of $CONFIG: skipped"
			continue
		fi
		def=${def:-$acct}
		[ -n "$(sacctmgr -n -P show assoc user="$user" account="$acct" format=user)" ] ||
			sacctmgr -i add user "$user" account="$acct" defaultaccount="$def" >/dev/null ||
			{ ic_log "cannot add Slurm user $user to account $acct"; return 1; }
	done
}

# Accounting objects that must exist before slurmctld reads the partitions (QOS=...).
accounting_objects() {
	local user accts a
	[ -n "$(sacctmgr -n -P show cluster "$IC_CLUSTER" format=cluster)" ] ||
		sacctmgr -i add cluster "$IC_CLUSTER" >/dev/null
	sh "$R/sacctmgr" objects || ic_die "render --section=sacctmgr script failed: sh $R/sacctmgr objects"
	# Serial on purpose: parallel adds were silently lost by slurmdbd 22.05.
	while read -r user accts; do
		case $user in '' | '#'*) continue ;; esac
		# shellcheck disable=SC2086 # accts is a word list
		add_user "$user" $accts || ic_die "adding the test users to Slurm accounting failed"
	done <"$IC_SRC/users.conf"
	local have missing=
	have=$(sacctmgr -n -P show assoc format=user,account)
	while read -r user accts; do
		case $user in '' | '#'*) continue ;; esac
		for a in $accts; do
			grep -qxF "$a" <<<"$ACCOUNTS" || continue
			grep -qxF "$user|$a" <<<"$have" || missing="$missing $user/$a"
		done
	done <"$IC_SRC/users.conf"
	[ -z "$missing" ] || ic_die "slurmdbd lost associations:$missing"
}

make_gpus() {
	local n i
	for n in "${NODES[@]}"; do
		[ "${GPU_COUNT[$n]}" -gt 0 ] || continue
		mkdir -p "$IC_GPU/$n"
		for ((i = 0; i < GPU_COUNT[$n]; i++)); do
			[ -c "$IC_GPU/$n/gpu$i" ] || mknod -m 666 "$IC_GPU/$n/gpu$i" c 1 3
		done
	done
}

stop_slurm() {
	# shellcheck disable=SC2046 # list of names
	ic_stop_daemons 20 $(ic_slurmd_names)
	ic_stop_daemon slurmctld 30
}

start_slurm() {
	local n
	if ! ic_running slurmctld; then
		mkdir -p "$IC_SPOOL/slurmctld"
		# slurmctld-side plugins (preempt/idletime, site_factor/idletime) read IDLETIME_CONFIG.
		ic_launch slurmctld env IDLETIME_CONFIG="$CONFIG" "$IC_BIN/slurmctld" -D -f "$IC_CONF"
		echo "$CONFIG" >"$IC_ETC/slurmctld-config"
	fi
	for n in $(ic_slurmd_names); do # slurmd of nodes no longer configured
		[[ " ${NODES[*]} " == *" ${n#slurmd-} "* ]] || ic_stop_daemon "$n" 20
	done
	for n in "${NODES[@]}"; do
		ic_running "slurmd-$n" && continue
		mkdir -p "$IC_SPOOL/slurmd-$n"
		ic_launch "slurmd-$n" "$IC_BIN/slurmd" -D -N "$n" -d "$IC_BIN/slurmstepd" -f "$IC_CONF"
	done
	ic_await slurmctld 30 ic_ctld_up
}

# All nodes registered and usable; nodes left DOWN/DRAIN/INVAL by an earlier run are resumed once.
nodes_ok() {
	local bad
	bad=$(sinfo -h -N -o '%N %T' 2>/dev/null | awk '$2 !~ /^(idle|mixed|allocated|completing|planned)$/')
	[ -z "$bad" ] && [ "$(sinfo -h -N -o '%N' 2>/dev/null | sort -u | wc -l)" -eq ${#NODES[@]} ]
}
resume_nodes() {
	local n st
	sinfo -h -N -o '%N %T' | while read -r n st; do
		case $st in drain* | down | inval | fail*) scontrol update nodename="$n" state=resume 2>/dev/null || true ;; esac
	done
}
wait_nodes() {
	local n
	ic_poll 5 nodes_ok && return 0
	resume_nodes
	ic_poll 25 nodes_ok && return 0
	ic_log "nodes not ready within 30s:"
	sinfo -N -o '%N %T %E' >&2 || true
	for n in "${NODES[@]}"; do
		ic_running "slurmd-$n" || { ic_log "slurmd-$n is not running"; ic_log_tail "slurmd-$n"; exit 1; }
	done
	ic_log_tail slurmctld
	exit 1
}

gpu_tres_ok() { sacctmgr -n -P show tres format=type,name 2>/dev/null | grep -qx 'gres|gpu'; }
accounting_limits() {
	if grep -q 'gres/gpu' "$R/sacctmgr"; then
		ic_poll 20 gpu_tres_ok || ic_die "slurmctld did not register TRES gres/gpu with slurmdbd"
	fi
	sh "$R/sacctmgr" limits || ic_die "render --section=sacctmgr script failed: sh $R/sacctmgr limits"
}

# Accounting is skipped when this exact script and users.conf were applied to this database before.
ACCT_SUM=$(cat "$R/sacctmgr" "$IC_SRC/users.conf" | sha256sum | cut -d' ' -f1)
acct_done() { [ "$(cat "$IC_ETC/accounting.done" 2>/dev/null)" = "$ACCT_SUM" ]; }

start_munged
start_mariadbd
start_slurmdbd
if [ "$SITE_ONLY" = 1 ]; then # the cluster record only: the site's accounts are its own
	[ -n "$(sacctmgr -n -P show cluster "$IC_CLUSTER" format=cluster)" ] || sacctmgr -i add cluster "$IC_CLUSTER" >/dev/null
	rm -f "$IC_ETC/accounting.done"
else
	acct_done || accounting_objects
fi
make_gpus
if [ "$CHANGED" = 1 ] && [ "$NODES_CHANGED" = 1 ] && ic_running slurmctld; then
	ic_log "nodes changed: restarting slurmctld and slurmd"
	stop_slurm
elif [ "$CHANGED" = 1 ] && [ "$PLUGINS_CHANGED" = 1 ] && ic_running slurmctld; then
	ic_log "plugins (cgroup.conf included), authentication or the idletime config path changed: restarting slurmctld and slurmd"
	stop_slurm
elif [ "$CHANGED" = 1 ] && ! ic_running slurmctld; then
	stop_slurm # slurmd daemons still on the old config; no slurmctld to pass a reconfigure on
fi
if [ "$CHANGED" = 1 ] && ic_running slurmctld && ic_ctld_up; then
	ic_log "configuration changed: scontrol reconfigure"
	if ! scontrol reconfigure; then
		ic_log "scontrol reconfigure failed"
		ic_log_tail slurmctld
		exit 1
	fi
fi
start_slurm
wait_nodes
if [ "$SITE_ONLY" = 0 ] && ! acct_done; then
	accounting_limits
	echo "$ACCT_SUM" >"$IC_ETC/accounting.done"
fi
ic_log "cluster up in $((($(date +%s%N) - T0) / 1000000)) ms: ${#NODES[@]} nodes, state in $IC_DIR"
echo "export SLURM_CONF=$IC_CONF"
