#!/usr/bin/env bash
# A bulk load of small rows with five secondary keys on the paged table store: peak server RSS
# against the memory budget, and the delta limit checkpoints calibrated (docs/PAGED_STORE.md,
# step 5, "The delta's limit follows what a log byte costs"). A program that prints a markdown
# table, not a test (CI does not run it).
#
#   bench/paged_index_load.sh
#   BEFORE_BIN=/path/to/old/onelog bench/paged_index_load.sh    # before vs after a change
#
# Settings (environment): ROWS (1000000, in INSERTs of 10,000 rows), BUDGET (128M,
# --innodb-buffer-pool-size), PORT (23720), ONELOG_BIN (default: cargo build --release),
# BEFORE_BIN (another onelog binary, measured first the same way). Each binary gets a fresh
# data directory on loopback; RSS is sampled every 200 ms while the load runs. Needs the
# mariadb client and python3.
set -euo pipefail
cd "$(dirname "$0")/.."

ROWS=${ROWS:-1000000}
BUDGET=${BUDGET:-128M}
PORT=${PORT:-23720}
if [[ -z ${ONELOG_BIN:-} ]]; then
    cargo build --release -p onelog >&2
    ONELOG_BIN=target/release/onelog
fi
# shellcheck source=lib/paged_common.sh
. bench/lib/paged_common.sh
paged_workdir paged-index-load

client() { timeout 900 mariadb -h127.0.0.1 -P"$PORT" -uroot "$@"; }
status() { client -N -e "SHOW GLOBAL STATUS LIKE '$1'" | cut -f2; }

# measure NAME BIN: one table row.
measure() {
    local name=$1 bin=$2 dir=$work/$1
    mkdir -p "$dir"
    paged_serve "$dir" "$bin"
    client -e 'CREATE DATABASE x; CREATE TABLE x.t (id INT PRIMARY KEY, a INT, b INT, c INT,
        d INT, e INT, KEY (a), KEY (b), KEY (c), KEY (d), KEY (e))'
    python3 - "$ROWS" <<'PY' >"$dir/load.sql"
import sys
rows, per = int(sys.argv[1]), 10000
for s in range(0, rows, per):
    vals = ",".join(
        f"({i},{i*7%1000003},{i*13%999983},{i*17%1000033},{i*19%998001},{i*23%1000037})"
        for i in range(s, min(s + per, rows)))
    print(f"INSERT INTO t VALUES {vals};")
PY
    local start end peak
    start=$(date +%s.%N)
    client x <"$dir/load.sql" &
    local load=$!
    peak=$(peak_rss_while "$load")
    wait "$load"
    end=$(date +%s.%N)
    printf '| %s | %.1f | %d | %s | %s | %s |\n' "$name" "$(echo "$end - $start" | bc)" "$peak" \
        "$(status Onelog_table_store_delta_limit_bytes)" "$(status Onelog_table_store_checkpoints)" \
        "$(status Onelog_table_store_commit_waits)"
    kill "$server"
    wait "$server" 2>/dev/null || true
    server=
}

echo "Index-heavy load, paged store, $ROWS rows with five secondary keys, --innodb-buffer-pool-size=$BUDGET, $(nproc) CPUs"
echo
echo '| binary | load s | peak RSS, MiB | delta limit after, bytes | checkpoints | commit waits |'
echo '|---|---|---|---|---|---|'
[[ -n ${BEFORE_BIN:-} ]] && measure before "$BEFORE_BIN"
measure onelog "$ONELOG_BIN"
