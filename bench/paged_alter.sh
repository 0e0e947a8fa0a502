#!/usr/bin/env bash
# Rewriting DDL on the paged table store: time and peak server RSS of ADD COLUMN, a copying
# ALTER TABLE and DROP COLUMN over a table larger than the memory budget (docs/PAGED_STORE.md,
# step 5, "Rewriting DDL is bounded"). A program that prints a markdown table, not a test (CI
# does not run it).
#
#   bench/paged_alter.sh
#   ROWS=200000 bench/paged_alter.sh                          # quick
#   BEFORE_BIN=/path/to/old/onelog bench/paged_alter.sh      # before vs after a change
#
# Settings (environment): ROWS (1000000, one sysbench table), BUDGET (128M,
# --innodb-buffer-pool-size), PORT (23700), ONELOG_BIN (default: cargo build --release),
# BEFORE_BIN (another onelog binary, measured first the same way), STATEMENT_TIMEOUT (600 s).
# Each binary gets a fresh data directory on loopback: sysbench prepare, 15 s for its
# checkpoints to take the rows into the base, then each statement in turn, RSS sampled every
# 100 ms while it runs. Needs sysbench and the mariadb client.
set -euo pipefail
cd "$(dirname "$0")/.."

ROWS=${ROWS:-1000000}
BUDGET=${BUDGET:-128M}
PORT=${PORT:-23700}
STATEMENT_TIMEOUT=${STATEMENT_TIMEOUT:-600}
if [[ -z ${ONELOG_BIN:-} ]]; then
    cargo build --release -p onelog >&2
    ONELOG_BIN=target/release/onelog
fi
STATEMENTS=(
    "ALTER TABLE sbtest1 ADD COLUMN extra INT NOT NULL DEFAULT 7"
    "ALTER TABLE sbtest1 MODIFY pad CHAR(80) NOT NULL DEFAULT ''"
    "ALTER TABLE sbtest1 DROP COLUMN extra"
)
# shellcheck source=lib/paged_common.sh
. bench/lib/paged_common.sh
paged_workdir paged-alter

client() { timeout "$STATEMENT_TIMEOUT" mariadb -h127.0.0.1 -P"$PORT" -uroot "$@"; }
rss_mib() { echo $(($(ps -o rss= -p "$server") / 1024)); }

# measure NAME BIN: one table row per statement.
measure() {
    local name=$1 bin=$2 dir=$work/$1
    mkdir -p "$dir"
    paged_serve "$dir" "$bin"
    client -e 'create database sbtest'
    sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$PORT" --mysql-user=root \
        --mysql-db=sbtest --tables=1 --table-size="$ROWS" --threads=2 oltp_read_only prepare \
        >/dev/null
    sleep 15
    local sql before peak start end
    for sql in "${STATEMENTS[@]}"; do
        before=$(rss_mib)
        peak=$before
        start=$(date +%s.%N)
        client sbtest -e "$sql" &
        local ddl=$!
        while kill -0 "$ddl" 2>/dev/null; do
            local now
            now=$(rss_mib)
            ((now > peak)) && peak=$now
            sleep 0.1
        done
        wait "$ddl"
        end=$(date +%s.%N)
        printf '| %s | `%s` | %.1f | %d | %d |\n' "$name" "$sql" "$(echo "$end - $start" | bc)" \
            "$before" "$peak"
        sleep 10
    done
    kill "$server"
    wait "$server" 2>/dev/null || true
    server=
}

echo "Rewriting DDL, paged store, $ROWS rows, --innodb-buffer-pool-size=$BUDGET, $(nproc) CPUs"
echo
echo '| binary | statement | seconds | RSS before, MiB | RSS peak, MiB |'
echo '|---|---|---|---|---|'
[[ -n ${BEFORE_BIN:-} ]] && measure before "$BEFORE_BIN"
measure onelog "$ONELOG_BIN"
