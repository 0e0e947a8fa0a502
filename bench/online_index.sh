#!/usr/bin/env bash
# CREATE INDEX beside small commits: how long a CREATE INDEX over a big table takes and what
# the single-row commits to another table see while it runs (their count, p99 and max
# latency). A program that prints a markdown table, not a test (CI does not run it).
#
#   bench/online_index.sh
#   ROWS=200000 bench/online_index.sh                         # quick
#   BEFORE_BIN=/path/to/old/onelog bench/online_index.sh     # before vs after a change
#   MARIADB=1 bench/online_index.sh                          # and MariaDB (mariadbd) beside
#
# Settings (environment): ROWS (1000000, sbtest.sbtest1), STORES ("memory paged"), BUDGET
# (128M, the paged store's --innodb-buffer-pool-size), PORT (23710), ONELOG_BIN (default:
# cargo build --release), BEFORE_BIN (another onelog binary, measured first the same way),
# MARIADB (1: MariaDB too, started by this script on a temp datadir with its defaults plus
# the binlog), STATEMENT_TIMEOUT (600 s). Each server gets a fresh data directory on loopback:
# sysbench prepare of sbtest1 (ROWS rows, its index k_1 included) and of sb2.sbtest1 (10,000
# rows), 15 s for checkpoints, then one sysbench thread of single-row autocommit UPDATEs on
# sb2 (bench/lib/small_commits.lua) that starts 3 s before `CREATE INDEX c_1 ON
# sbtest1(c)` and stops 3 s after it. Needs sysbench and the mariadb client.
set -euo pipefail
cd "$(dirname "$0")/.."

ROWS=${ROWS:-1000000}
STORES=${STORES:-memory paged}
BUDGET=${BUDGET:-128M}
PORT=${PORT:-23710}
STATEMENT_TIMEOUT=${STATEMENT_TIMEOUT:-600}
if [[ -z ${ONELOG_BIN:-} ]]; then
    cargo build --release -p onelog >&2
    ONELOG_BIN=target/release/onelog
fi
# shellcheck source=lib/paged_common.sh
. bench/lib/paged_common.sh
paged_workdir online-index

# shellcheck source=lib/servers.sh
. bench/lib/servers.sh
sb() {
    sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$PORT" --mysql-user=root \
        --tables=1 "$@"
}

# measure NAME BIN STORE: one table row.
measure() {
    local name=$1 bin=$2 store=$3 dir=$work/$1-$3
    mkdir -p "$dir"
    serve "$bin" "$store" "$dir"
    client -e 'create database sbtest; create database sb2'
    sb --mysql-db=sbtest --table-size="$ROWS" --threads=2 oltp_read_only prepare >/dev/null
    sb --mysql-db=sb2 --table-size=10000 oltp_read_only prepare >/dev/null
    sleep 15
    local go=$dir/go stop=$dir/stop out=$dir/small.txt start end
    SB_GO_FILE=$go SB_STOP_FILE=$stop sb --mysql-db=sb2 --table-size=10000 --threads=1 \
        --time=$((STATEMENT_TIMEOUT + 30)) --percentile=99 --histogram=off \
        bench/lib/small_commits.lua run >"$out" 2>&1 &
    local small=$!
    touch "$go"
    sleep 3
    start=$(date +%s.%N)
    client sbtest -e 'CREATE INDEX c_1 ON sbtest1(c)'
    end=$(date +%s.%N)
    sleep 3
    touch "$stop"
    wait "$small"
    local events p99 max
    events=$(awk '/total number of events:/ {print $5}' "$out")
    p99=$(awk '/99th percentile:/ {print $3}' "$out")
    max=$(awk '/max:/ {print $2; exit}' "$out")
    printf '| %s | %s | %.2f | %s | %s | %s |\n' "$name" "$store" \
        "$(echo "$end - $start" | bc)" "$events" "$p99" "$max"
    kill "$server"
    wait "$server" 2>/dev/null || true
    server=
}

echo "CREATE INDEX c_1 ON sbtest1(c) over $ROWS rows beside single-row UPDATEs of another" \
    "table (one thread, from 3 s before to 3 s after it), $(nproc) CPUs"
echo
echo '| server | store | CREATE INDEX s | small commits | their p99 ms | their max ms |'
echo '|---|---|---|---|---|---|'
for store in $STORES; do
    [[ -n ${BEFORE_BIN:-} ]] && measure before "$BEFORE_BIN" "$store"
    measure onelog "$ONELOG_BIN" "$store"
done
[[ ${MARIADB:-0} == 1 ]] && measure mariadb mariadb innodb
exit 0
