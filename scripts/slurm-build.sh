# shellcheck shell=sh
# slurm_build TREE PREFIX JOBS: configures and builds one Slurm source tree into PREFIX, only what
# the local cluster (testsuite/cluster) and idletime's plugins use: the daemons, the commands,
# libslurm, the headers and the plugins, with munge, slurmdbd on MariaDB, multiple slurmd and
# JSON. No documentation, contribs, PAM, REST daemon, GUI, PMIx, GPU libraries (the cluster
# emulates GPUs), debug info (-g0) or heavy optimisation (-O1): a cold build has to fit CI's
# time. A stamp in PREFIX records the flags; a later call with the same flags does nothing.
# No --with-lz4=no: 26.05's configure then fails ("conditional BUILD_LZ4 was never defined");
# without liblz4-dev (not installed) nothing of lz4 is built either way.
# Sourced by get-slurm.sh.
SLURM_BUILD_FLAGS="--disable-dependency-tracking --with-munge --enable-multiple-slurmd --disable-debug --with-json --with-hwloc
 --with-mysql_config=/usr/bin --without-pmix --without-hdf5 --without-nvml --without-rsmi --without-oneapi
 --without-ucx --without-freeipmi --without-rdkafka --without-s2n --without-bpf --without-jwt
 --without-http-parser --without-yaml --with-libcurl=no --without-lua
 --disable-slurmrestd --disable-sview --disable-x11 --disable-pam"
SLURM_BUILD_CFLAGS="-O1 -g0 -pipe"

slurm_build() {
    _tree=$1 _prefix=$2 _jobs=$3
    _stamp="$_prefix/.idletime-build"
    _want="flags: $SLURM_BUILD_CFLAGS $(echo $SLURM_BUILD_FLAGS)"
    if [ -x "$_prefix/sbin/slurmctld" ] && [ "$(cat "$_stamp" 2>/dev/null)" = "$_want" ]; then
        echo "idletime/get-slurm: reusing $_prefix"
        # A source tree fetched again after the build (e.g. removed to save disk) only needs
        # configure for idletime's --with-slurm-src (config.h): no make, the prefix is kept.
        [ -f "$_tree/config.h" ] || slurm_configure "$_tree" "$_prefix"
        return
    fi
    _t0=$(date +%s)
    echo "idletime/get-slurm: building $_tree into $_prefix (log: $_tree/build.log)"
    slurm_configure "$_tree" "$_prefix" || return 1
    cd "$_tree"
    # src/ (libraries, daemons, commands, plugins) and the headers: no doc, contribs, testsuite.
    { nice -n 5 make -j"$_jobs" -C src && nice -n 5 make -C src install && make install-pkgincludeHEADERS; } >>build.log 2>&1 ||
        { tail -30 build.log; return 1; }
    echo "$_want" >"$_stamp"
    echo "idletime/get-slurm: built $_prefix in $(($(date +%s) - _t0)) s"
    cd - >/dev/null
}

# slurm_configure TREE PREFIX: runs Slurm's ./configure with the flags above (writes config.h).
slurm_configure() {
    echo "idletime/get-slurm: configuring $1 for $2 (log: $1/build.log)"
    # shellcheck disable=SC2086 # word list on purpose
    (cd "$1" && nice -n 5 env CFLAGS="$SLURM_BUILD_CFLAGS" ./configure --prefix="$2" --sysconfdir="$2/etc" \
        $SLURM_BUILD_FLAGS >build.log 2>&1) || { tail -20 "$1/build.log"; return 1; }
    # mariadb_config stands in for mysql_config (Debian 12 ships only the former).
    grep -q '^#define HAVE_MYSQL 1' "$1/config.h" ||
        { echo "idletime/get-slurm: configure found no MariaDB client library (libmariadb-dev)"; return 1; }
}
