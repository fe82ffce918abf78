#!/bin/bash
# Show which daemons of the local cluster run (by pid file) and, when slurmctld answers, sinfo.
# Usage: status.sh [--dir STATEDIR]. Exit 0 when every daemon runs, 1 otherwise.
set -uo pipefail
# shellcheck source=common.sh
. "$(dirname "$0")/common.sh"
case ${1:-} in
--dir) IC_DIR=${2:?}; ic_layout ;;
--dir=*) IC_DIR=${1#*=}; ic_layout ;;
'') ;;
*) echo "usage: $0 [--dir STATEDIR]" >&2; exit 2 ;;
esac
rc=0
echo "state dir: $IC_DIR"
for d in $IC_CORE_DAEMONS $(ic_slurmd_names); do
	if pid=$(ic_pid "$d"); then
		printf '  %-16s running  pid %s\n' "$d" "$pid"
	else
		printf '  %-16s STOPPED  (log: %s)\n' "$d" "$(ic_logfile "$d")"
		rc=1
	fi
done
if ic_ctld_up; then
	echo "export SLURM_CONF=$IC_CONF"
	sinfo -o '%14P %.5a %.6D %10T %14G %N'
	echo "jobs: $(squeue -h -o %i | wc -l)"
fi
exit $rc
