#!/usr/bin/env bash
# sysbench `prepare` into the paged table store, onelog binaries side by side: load time, peak
# server RSS, the commits' waits for checkpoints, what the server wrote to disk, and the base's
# size (docs/PAGED_STORE.md, step 8, "Uncompressed L1"). A program that prints a markdown
# table, not a test (CI does not run it).
#
#   bench/paged_load.sh                                    # the build of this tree
#   BEFORE_BIN=/path/to/old/onelog bench/paged_load.sh     # before vs after a change, in turn
#
# Settings (environment): TABLES (4) × SIZE (500000) rows, THREADS (8, sysbench's: one loader
# per table up to the table count), BUDGET (256M, --innodb-buffer-pool-size), ROUNDS (3: each
# round loads with every binary in turn, so a VM's drift hits both), FSYNC_DELAY_US (1000,
# injected after every fsync/fdatasync by bench/fsync_delay; 0 for none), PORT (23730),
# ONELOG_BIN (default: cargo build --release), BEFORE_BIN (another binary, loaded first in
# each round). Every load gets a fresh data directory on loopback; RSS is sampled every 200 ms.
# Needs sysbench, the mariadb client, gcc and bc.
set -euo pipefail
cd "$(dirname "$0")/.."

TABLES=${TABLES:-4}
SIZE=${SIZE:-500000}
THREADS=${THREADS:-8}
BUDGET=${BUDGET:-256M}
ROUNDS=${ROUNDS:-3}
FSYNC_DELAY_US=${FSYNC_DELAY_US:-1000}
PORT=${PORT:-23730}
if [[ -z ${ONELOG_BIN:-} ]]; then
    cargo build --release -p onelog >&2
    ONELOG_BIN=${CARGO_TARGET_DIR:-target}/release/onelog
fi
# shellcheck source=lib/paged_common.sh
. bench/lib/paged_common.sh
paged_workdir paged-load

preload=
if ((FSYNC_DELAY_US > 0)); then
    gcc -O2 -shared -fPIC -o "$work/fsync_delay.so" bench/fsync_delay/fsync_delay.c -ldl
    preload=$work/fsync_delay.so
fi

client() { timeout 900 mariadb -h127.0.0.1 -P"$PORT" -uroot "$@"; }
status() { client -N -e "SHOW GLOBAL STATUS LIKE '$1'" | cut -f2; }

# measure NAME BIN ROUND: one table row.
measure() {
    local name=$1 bin=$2 round=$3 dir=$work/$1
    rm -rf "$dir"
    mkdir -p "$dir"
    LD_PRELOAD=$preload FSYNC_DELAY_US=$FSYNC_DELAY_US FSYNC_COUNT_FILE=$dir/fsyncs \
        paged_serve "$dir" "$bin"
    client -e 'CREATE DATABASE sbtest'
    local start end peak
    start=$(date +%s.%N)
    timeout 1800 sysbench oltp_read_only --db-driver=mysql --mysql-host=127.0.0.1 \
        --mysql-port="$PORT" --mysql-user=root --tables="$TABLES" --table-size="$SIZE" \
        --threads="$THREADS" prepare >"$dir/prepare" 2>&1 &
    local load=$!
    peak=$(peak_rss_while "$load")
    wait "$load" || { cat "$dir/prepare" >&2; exit 1; }
    end=$(date +%s.%N)
    local written
    written=$(awk '/^write_bytes/ {print $2}' "/proc/$server/io")
    printf '| %s | %s | %.1f | %d | %s | %.1f | %.2f | %d |\n' "$name" "$round" \
        "$(echo "$end - $start" | bc)" "$peak" "$(status Onelog_table_store_commit_waits)" \
        "$(echo "$(status Onelog_table_store_commit_wait_us) / 1000000" | bc -l)" \
        "$(echo "$written / 1000000000" | bc -l)" \
        "$(du -sm "$dir/data/checkpoints/base" | cut -f1)"
    kill "$server"
    wait "$server" 2>/dev/null || true
    server=
    rm -rf "$dir"
}

echo "sysbench prepare into the paged store: $TABLES × $SIZE rows, $THREADS threads," \
    "--innodb-buffer-pool-size=$BUDGET, ${FSYNC_DELAY_US} µs injected per fsync, $(nproc) CPUs"
echo
echo '| binary | round | load s | peak RSS, MiB | commit waits | waited s (all loaders) | written by the server, GB | base MiB at the end |'
echo '|---|---|---|---|---|---|---|---|'
for round in $(seq "$ROUNDS"); do
    [[ -n ${BEFORE_BIN:-} ]] && measure before "$BEFORE_BIN" "$round"
    measure onelog "$ONELOG_BIN" "$round"
done
