#!/usr/bin/env bash
# DDL beside sysbench oltp_read_write: what the DDL statements cost the transactions of the
# table they change (MariaDB's metadata locks make a DDL wait for them, and them wait behind
# it; without them a transaction that used the table fails its COMMIT with 1412). A program
# that prints a markdown table, not a test (CI does not run it).
#
#   bench/ddl_under_load.sh
#   BEFORE_BIN=/path/to/old/onelog bench/ddl_under_load.sh   # before vs after a change
#   MARIADB=1 bench/ddl_under_load.sh                        # and MariaDB (mariadbd) beside
#
# Settings (environment): ROWS (100000, one sbtest table), THREADS (8), PORT (23720),
# ONELOG_BIN (default: cargo build --release), BEFORE_BIN, MARIADB (1: MariaDB too, started
# by this script on a temp datadir with its defaults plus the binlog), STATEMENT_TIMEOUT (300
# s). Each server gets a fresh data directory on loopback; sysbench oltp_read_write runs 40 s
# with every error ignored and its transaction retried (`--mysql-ignore-errors=all`: the
# count is sysbench's "ignored errors"), and at 10, 20 and 30 s one session runs `ALTER TABLE
# sbtest1 ADD COLUMN x INT`, `CREATE INDEX x_1 ON sbtest1 (x)` and `ALTER TABLE sbtest1 DROP
# COLUMN x`. Needs sysbench and the mariadb client.
set -euo pipefail
cd "$(dirname "$0")/.."

ROWS=${ROWS:-100000}
THREADS=${THREADS:-8}
PORT=${PORT:-23720}
STATEMENT_TIMEOUT=${STATEMENT_TIMEOUT:-300}
if [[ -z ${ONELOG_BIN:-} ]]; then
    cargo build --release -p onelog >&2
    ONELOG_BIN=target/release/onelog
fi
# shellcheck source=lib/paged_common.sh
. bench/lib/paged_common.sh
# shellcheck source=lib/servers.sh
. bench/lib/servers.sh
paged_workdir ddl-load

sb() {
    sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$PORT" --mysql-user=root \
        --mysql-db=sbtest --tables=1 --table-size="$ROWS" "$@"
}

# timed SQL: runs SQL, prints its seconds.
timed() {
    local start end
    start=$(date +%s.%N)
    client sbtest -e "$1"
    end=$(date +%s.%N)
    printf '%.2f' "$(echo "$end - $start" | bc)"
}

# measure NAME BIN: one table row.
measure() {
    local name=$1 bin=$2 dir=$work/$1
    mkdir -p "$dir"
    serve "$bin" memory "$dir"
    client -e 'create database sbtest'
    sb --threads=2 oltp_read_write prepare >/dev/null
    local out=$dir/sb.txt
    sb --threads="$THREADS" --time=40 --percentile=99 --histogram=off --verbosity=5 \
        --mysql-ignore-errors=all oltp_read_write run >"$out" 2>&1 &
    local load=$! add idx drop
    sleep 10
    add=$(timed 'ALTER TABLE sbtest1 ADD COLUMN x INT')
    sleep 10
    idx=$(timed 'CREATE INDEX x_1 ON sbtest1 (x)')
    sleep 10
    drop=$(timed 'ALTER TABLE sbtest1 DROP COLUMN x')
    wait "$load" || true
    local tps errors p99 max
    tps=$(awk -F'[()]' '/transactions:/ {split($2, a, " "); print a[1]}' "$out")
    errors=$(awk '/ignored errors:/ {print $3}' "$out")
    # Which errors (sysbench names each one it ignores at verbosity 5, a repeat as "(last
    # message repeated N times)").
    local codes
    codes=$(awk '/Ignoring error/ {last = $4; n[last]++; next}
        /last message repeated/ && last != "" {
            match($0, /repeated [0-9]+/); n[last] += substr($0, RSTART + 9, RLENGTH - 9)
            last = ""; next
        }
        {last = ""}
        END {for (c in n) {printf "%s%s x %d", sep, c, n[c]; sep = ", "}}' "$out")
    [[ -n $codes ]] && errors="$errors ($codes)"
    p99=$(awk '/99th percentile:/ {print $3}' "$out")
    max=$(awk '/max:/ {print $2; exit}' "$out")
    printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$tps" "$errors" "$p99" \
        "$max" "$add" "$idx" "$drop"
    kill "$server"
    wait "$server" 2>/dev/null || true
    server=
}

echo "sysbench oltp_read_write, 1 table x $ROWS rows, $THREADS threads, 40 s, every error" \
    "ignored and retried; DDL on sbtest1 at 10, 20 and 30 s; $(nproc) CPUs"
echo
echo '| server | TPS | ignored errors | p99 ms | max ms | ADD COLUMN s | CREATE INDEX s | DROP COLUMN s |'
echo '|---|---|---|---|---|---|---|---|'
[[ -n ${BEFORE_BIN:-} ]] && measure before "$BEFORE_BIN"
measure onelog "$ONELOG_BIN"
[[ ${MARIADB:-0} == 1 ]] && measure mariadb mariadb
exit 0
