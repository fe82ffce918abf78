#!/bin/bash
# The version guard both ways: SBATCH (a Slurm command of one release) loads the SPANK plugin
# PLUGIN (idletime built for another release) and must refuse it with idletime's one line naming
# both releases, and exit non-zero (no job submitted: there is no controller to submit to).
# Usage: version-guard.sh SBATCH PLUGIN BUILT HOST   (BUILT e.g. 24.11.5, HOST e.g. 22.05)
# Exit 0 when the line is there; 1 with the output otherwise.
set -u
sbatch=$1 plugin=$2 built=$3 host=$4
[ -x "$sbatch" ] && [ -f "$plugin" ] || { echo "version-guard: no $sbatch or $plugin" >&2; exit 1; }
tmp=$(mktemp -d /tmp/idletime-guard.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
echo "required $plugin" >"$tmp/plugstack.conf"
printf 'ClusterName=guard\nSlurmctldHost=localhost\nPlugStackConfig=%s\n' "$tmp/plugstack.conf" >"$tmp/slurm.conf"
out=$(cd "$tmp" && SLURM_CONF=$tmp/slurm.conf timeout 30 "$sbatch" --wrap=true 2>&1)
rc=$?
want="was built for Slurm $built but this is Slurm $host"
if [ $rc -ne 0 ] && grep -qF "idletime: spank ($plugin) $want" <<<"$out"; then
	echo "PASS version-guard: $(basename "$(dirname "$(dirname "$sbatch")")")/$(basename "$sbatch") refused $plugin: $want"
	exit 0
fi
echo "FAIL version-guard: $sbatch with $plugin (exit $rc), wanted '$want':" >&2
sed 's/^/    | /' <<<"$out" >&2
exit 1
