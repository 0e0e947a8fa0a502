#!/usr/bin/env bash
# sysbench: onelog vs MariaDB 10.11 on this machine, side by side. A program that prints a
# markdown table, not a test (CI does not run it).
#
#   bench/sysbench_vs_mariadb.sh
#   SECONDS_PER_CELL=10 TABLES=4 TABLE_SIZE=10000 bench/sysbench_vs_mariadb.sh   # quick
#
#   BEFORE_BIN=/path/to/old/onelog bench/sysbench_vs_mariadb.sh   # onelog before vs after a change
#
# With BEFORE_BIN set, the baseline is that onelog binary instead of MariaDB (same settings,
# alternating in one run): how a refactor is shown to cost nothing.
# Settings (environment): RUNS (3), SECONDS_PER_CELL (30), WARMUP_SECONDS (10), TABLES (8),
# TABLE_SIZE (100000), THREADS ("1 8 32"), WORKLOADS ("oltp_point_select oltp_read_only
# oltp_write_only"), PORT_BASE (23306), ONELOG_BIN (default: cargo build --release).
#
# Both servers run on temporary data directories on loopback, one at a time: onelog at
# innodb_flush_log_at_trx_commit=1 (its log is the binlog); MariaDB with InnoDB flush at commit
# 1 and a buffer pool large enough for the whole data set, its binlog OFF for the read-only
# workloads (oltp_point_select, oltp_read_only, select_random_*: a binlog costs a reader
# nothing there) and ON (ROW, sync_binlog=1: the same durability as onelog) for the others.
# MariaDB is restarted on the same data directory (and warmed up again) when the next workload
# needs the other binlog setting; each row of the table names the setting it ran under.
# Per system: create the tables (sysbench prepare), warm up with oltp_read_only, then every
# workload x thread count for SECONDS_PER_CELL seconds.
# The whole sequence (MariaDB, then onelog, fresh data directories) is repeated RUNS times
# and the table shows per-cell medians (this machine may be shared and noisy).
# Needs sysbench, the mariadb client and mariadb-server (installed with apt-get if missing
# and root).
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-3}
SECONDS_PER_CELL=${SECONDS_PER_CELL:-30}
WARMUP_SECONDS=${WARMUP_SECONDS:-10}
TABLES=${TABLES:-8}
TABLE_SIZE=${TABLE_SIZE:-100000}
THREADS=${THREADS:-"1 8 32"}
WORKLOADS=${WORKLOADS:-"oltp_point_select oltp_read_only oltp_write_only"}
PORT_BASE=${PORT_BASE:-23306}

need=()
command -v sysbench >/dev/null || need+=(sysbench)
command -v mariadb >/dev/null || need+=(mariadb-client)
command -v mariadbd >/dev/null || need+=(mariadb-server)
if ((${#need[@]})); then
    if [[ $(id -u) -eq 0 ]]; then
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq "${need[@]}"
    else
        echo "missing: ${need[*]} (apt-get install -y ${need[*]})" >&2
        exit 1
    fi
fi

if [[ -z ${ONELOG_BIN:-} ]]; then
    cargo build --release -p onelog >&2
    ONELOG_BIN=${CARGO_TARGET_DIR:-target}/release/onelog
fi

WORK=$(mktemp -d /tmp/onelog-bench.XXXXXX)
SERVER_PID=
cleanup() {
    if [[ -n $SERVER_PID ]]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

wait_ready() { # port
    for _ in $(seq 1 600); do
        if mariadb --no-defaults --protocol=TCP -h127.0.0.1 -P"$1" -uroot -e "SELECT 1" >/dev/null 2>&1; then
            return 0
        fi
        sleep 0.1
    done
    echo "server on port $1 did not come up" >&2
    return 1
}

stop_server() {
    kill "$SERVER_PID"
    wait "$SERVER_PID" || true
    SERVER_PID=
}

# The MariaDB binlog setting a workload runs under: off for read-only workloads, on otherwise.
binlog_for() { # workload
    case $1 in
        oltp_point_select | oltp_read_only | select_random_points | select_random_ranges) echo off ;;
        *) echo on ;;
    esac
}

describe_binlog() { # on|off
    if [[ $1 == on ]]; then echo "binlog ON (ROW, sync_binlog=1)"; else echo "binlog OFF"; fi
}

MARIADB_BINLOG=
start_mariadb() { # port [binlog: on|off]
    local d=$WORK/mariadb-$RUN binlog=${2:-on}
    if [[ ! -d $d/data ]]; then
        mkdir -p "$d"
        mariadb-install-db --no-defaults --datadir="$d/data" --user="$(id -un)" \
            --auth-root-authentication-method=normal >"$d/install.log" 2>&1
    fi
    local log_opts=(--skip-log-bin)
    if [[ $binlog == on ]]; then
        log_opts=(--log-bin="$d/data/mariadb-bin" --binlog-format=ROW --sync-binlog=1)
    fi
    mariadbd --no-defaults --datadir="$d/data" --socket="$d/mariadb.sock" --port="$1" \
        --bind-address=127.0.0.1 --user="$(id -un)" --max-connections=500 \
        --innodb-buffer-pool-size=2G --innodb-flush-log-at-trx-commit=1 --server-id=1 \
        "${log_opts[@]}" >>"$d/server.log" 2>&1 &
    SERVER_PID=$!
    MARIADB_BINLOG=$binlog
    wait_ready "$1"
}

start_onelog() { start_onelog_bin "$1" "$ONELOG_BIN" onelog; }
start_before() { start_onelog_bin "$1" "$BEFORE_BIN" before; }

start_onelog_bin() { # port binary name
    local d=$WORK/$3-$RUN bin=$2
    mkdir -p "$d"
    # root over TCP without a password, as mariadb-install-db's option of the same name gives
    # MariaDB above (onelog's default root is unix_socket only).
    "$bin" serve --datadir="$d/data" --port="$1" --max-connections=500 \
        --innodb-flush-log-at-trx-commit=1 --auth-root-authentication-method=normal \
        >"$d/server.log" 2>&1 &
    SERVER_PID=$!
    wait_ready "$1"
}

sb() { # port workload threads seconds command
    sysbench "$2" --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$1" --mysql-user=root \
        --mysql-db=sbtest --tables="$TABLES" --table-size="$TABLE_SIZE" --threads="$3" \
        --time="$4" --events=0 --report-interval=0 "$5"
}

declare -A TPS QPS P95 CONFIG
run_system() { # name port
    local name=$1 port=$2
    local first=${WORKLOADS%% *}
    "start_$name" "$port" "$(binlog_for "$first")"
    mariadb --no-defaults --protocol=TCP -h127.0.0.1 -P"$port" -uroot -e "CREATE DATABASE sbtest"
    local pthreads=$((TABLES < 8 ? TABLES : 8))
    sb "$port" oltp_read_only "$pthreads" 0 prepare >/dev/null
    sb "$port" oltp_read_only 8 "$WARMUP_SECONDS" run >/dev/null
    for w in $WORKLOADS; do
        if [[ $name == mariadb ]]; then
            local want
            want=$(binlog_for "$w")
            if [[ $want != "$MARIADB_BINLOG" ]]; then
                echo "run $RUN mariadb: restarting with $(describe_binlog "$want") for $w" >&2
                stop_server
                start_mariadb "$port" "$want"
                sb "$port" oltp_read_only 8 "$WARMUP_SECONDS" run >/dev/null
            fi
            CONFIG[$w]=$(describe_binlog "$want")
        fi
        for t in $THREADS; do
            local out
            out=$(sb "$port" "$w" "$t" "$SECONDS_PER_CELL" run)
            local tps qps p95
            tps=$(awk '/transactions:/ {gsub(/\(/, "", $3); print $3}' <<<"$out")
            qps=$(awk '/queries:/ && !/performed/ {gsub(/\(/, "", $3); print $3}' <<<"$out")
            p95=$(awk '/95th percentile:/ {print $3}' <<<"$out")
            TPS[$name,$w,$t]+="$tps "
            QPS[$name,$w,$t]+="$qps "
            P95[$name,$w,$t]+="$p95 "
            local how=""
            if [[ $name == mariadb ]]; then how=" [$(describe_binlog "$MARIADB_BINLOG")]"; fi
            echo "run $RUN $name$how $w threads=$t: $tps tps, $qps qps, p95 $p95 ms" >&2
        done
    done
    stop_server
    rm -rf "${WORK:?}/$name-$RUN"
}

BASE=mariadb BASE_NAME=MariaDB
if [[ -n ${BEFORE_BIN:-} ]]; then BASE=before BASE_NAME="onelog before"; fi
for RUN in $(seq 1 "$RUNS"); do
    run_system "$BASE" "$((PORT_BASE + 2 * RUN))"
    run_system onelog "$((PORT_BASE + 2 * RUN + 1))"
done

median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }

echo "### sysbench: onelog vs $BASE_NAME"
echo
echo "Machine: $(nproc) CPUs ($(lscpu | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print $2; exit}')),"\
     "$(free -g | awk '/Mem:/ {print $2}') GiB RAM, kernel $(uname -r);"\
     "$(mariadbd --version | awk '{print $3}'), $(sysbench --version), onelog $("$ONELOG_BIN" --version | awk '{print $3}')${BEFORE_BIN:+ (before: $BEFORE_BIN)}."
echo "Settings: --tables=$TABLES --table-size=$TABLE_SIZE, ${SECONDS_PER_CELL}s per cell after a ${WARMUP_SECONDS}s warm-up (again after each MariaDB restart); medians of $RUNS runs."
echo "Durability: InnoDB flush at commit 1 on MariaDB; onelog's log (its binlog) at innodb_flush_log_at_trx_commit=1."
echo "MariaDB's binlog: OFF for the read-only workloads, ON (ROW, sync_binlog=1) for the others (column 'MariaDB config')."
echo
B=$BASE_NAME
echo "| workload | threads | MariaDB config | $B TPS | onelog TPS | onelog/$B | $B QPS | onelog QPS | $B p95 ms | onelog p95 ms |"
echo "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"
for w in $WORKLOADS; do
    for t in $THREADS; do
        mt=$(median "${TPS[$BASE,$w,$t]}"); ot=$(median "${TPS[onelog,$w,$t]}")
        echo "| $w | $t | ${CONFIG[$w]:-n/a} | $mt | $ot | $(ratio "$ot" "$mt") | $(median "${QPS[$BASE,$w,$t]}") | $(median "${QPS[onelog,$w,$t]}") | $(median "${P95[$BASE,$w,$t]}") | $(median "${P95[onelog,$w,$t]}") |"
    done
done
