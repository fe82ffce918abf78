#!/bin/sh
# Purges idletime's Debian packages and checks that nothing they installed is left: every path
# `dpkg -L` listed before the purge is gone, except directories another package owns. What the
# packages never install stays the site's (its config in /etc/idletime, the checkpoint root).
# Usage: scripts/test-purge.sh PACKAGE...   (root; the packages installed). Exit 0 when clean.
set -eu
[ $# -gt 0 ] || { echo "usage: $0 PACKAGE..." >&2; exit 2; }
list=$(mktemp); trap 'rm -f "$list"' EXIT
for p in "$@"; do dpkg -L "$p" >>"$list"; done
sort -u -o "$list" "$list"
echo "idletime/test-purge: $(wc -l <"$list") paths installed by: $*"
# State idletime-ft-hook keeps at its default paths (the cluster tests give it others): made here
# as the hook makes it, so the purge must remove it.
if dpkg -L idletime >/dev/null 2>&1 && [ ! -e /var/lib/idletime/ft-hook-wake ]; then
	mkdir -p /var/lib/idletime/ft-hook-wake /var/lib/idletime/ft-hook-wake.jobs && echo '{}' >/var/lib/idletime/ft-hook-last-good.json
	touch /var/lib/idletime/ft-hook-wake/12345 /var/lib/idletime/ft-hook-wake.jobs/12345
fi
# ... and the textfile unit's scrape (systemd's StateDirectory, made here as systemd would).
if dpkg -L idletime >/dev/null 2>&1 && [ ! -e /var/lib/idletime-exporter ]; then
	mkdir -p /var/lib/idletime-exporter && echo 'idletime_up 1' >/var/lib/idletime-exporter/idletime.prom
fi
DEBIAN_FRONTEND=noninteractive apt-get purge -y -q "$@" >/dev/null
left=0
for p in "$@"; do
	if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'installed\|config-files'; then
		echo "idletime/test-purge: $p is still known to dpkg: $(dpkg-query -W -f='${Status}' "$p")"; left=1
	fi
done
while IFS= read -r f; do
	[ -e "$f" ] || [ -L "$f" ] || continue
	[ -L "$f" ] && [ -d "$f" ] && continue  # /lib -> usr/lib and the like (merged /usr)
	if [ -d "$f" ] && [ ! -L "$f" ]; then
		# A directory another package owns, or one holding files of others, is not ours to remove.
		dpkg -S "$f" >/dev/null 2>&1 || [ -n "$(ls -A "$f")" ] && continue
	fi
	echo "idletime/test-purge: left behind: $f"; left=1
done <"$list"
# Paths that only idletime uses must be gone as a whole (also files made at run time, e.g. .pyc).
for d in /var/lib/idletime /var/lib/idletime-exporter /usr/lib/idletime /usr/libexec/idletime /usr/share/idletime /usr/include/idletime \
	/usr/lib/python3/dist-packages/idletime; do
	[ ! -e "$d" ] || { echo "idletime/test-purge: left behind: $d ($(find "$d" | head -3 | tr '\n' ' '))"; left=1; }
done
[ "$left" = 0 ] && echo "idletime/test-purge: purge left nothing behind"
exit "$left"
