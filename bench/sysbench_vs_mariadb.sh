#!/usr/bin/env bash
# sysbench: onelog vs MariaDB 10.11 on this machine, side by side. A program that prints a
# markdown table, not a test (CI does not run it).
#
#   bench/sysbench_vs_mariadb.sh
#   SECONDS_PER_CELL=10 TABLES=4 TABLE_SIZE=10000 bench/sysbench_vs_mariadb.sh   # quick
#
# Settings (environment): RUNS (3), SECONDS_PER_CELL (30), WARMUP_SECONDS (10), TABLES (8),
# TABLE_SIZE (100000), THREADS ("1 8 32"), WORKLOADS ("oltp_point_select oltp_read_only
# oltp_write_only"), PORT_BASE (23306), ONELOG_BIN (default: cargo build --release).
#
# Both servers run on temporary data directories on loopback, one at a time, each with the
# same durability: onelog at innodb_flush_log_at_trx_commit=1 (its log is the binlog);
# MariaDB with InnoDB flush at commit 1, the binlog on (ROW) with sync_binlog=1, a buffer pool
# large enough for the whole data set. Per system: create the tables (sysbench prepare), warm
# up with oltp_read_only, then every workload x thread count for SECONDS_PER_CELL seconds.
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

start_mariadb() { # port
    local d=$WORK/mariadb-$RUN
    mkdir -p "$d"
    mariadb-install-db --no-defaults --datadir="$d/data" --user="$(id -un)" \
        --auth-root-authentication-method=normal >"$d/install.log" 2>&1
    mariadbd --no-defaults --datadir="$d/data" --socket="$d/mariadb.sock" --port="$1" \
        --bind-address=127.0.0.1 --user="$(id -un)" --max-connections=500 \
        --innodb-buffer-pool-size=2G --innodb-flush-log-at-trx-commit=1 \
        --log-bin="$d/data/mariadb-bin" --binlog-format=ROW --sync-binlog=1 --server-id=1 \
        >"$d/server.log" 2>&1 &
    SERVER_PID=$!
    wait_ready "$1"
}

start_onelog() { # port
    local d=$WORK/onelog-$RUN
    mkdir -p "$d"
    "$ONELOG_BIN" serve --datadir="$d/data" --port="$1" --max-connections=500 \
        --innodb-flush-log-at-trx-commit=1 >"$d/server.log" 2>&1 &
    SERVER_PID=$!
    wait_ready "$1"
}

sb() { # port workload threads seconds command
    sysbench "$2" --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$1" --mysql-user=root \
        --mysql-db=sbtest --tables="$TABLES" --table-size="$TABLE_SIZE" --threads="$3" \
        --time="$4" --events=0 --report-interval=0 "$5"
}

declare -A TPS QPS P95
run_system() { # name port
    local name=$1 port=$2
    "start_$name" "$port"
    mariadb --no-defaults --protocol=TCP -h127.0.0.1 -P"$port" -uroot -e "CREATE DATABASE sbtest"
    local pthreads=$((TABLES < 8 ? TABLES : 8))
    sb "$port" oltp_read_only "$pthreads" 0 prepare >/dev/null
    sb "$port" oltp_read_only 8 "$WARMUP_SECONDS" run >/dev/null
    for w in $WORKLOADS; do
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
            echo "run $RUN $name $w threads=$t: $tps tps, $qps qps, p95 $p95 ms" >&2
        done
    done
    stop_server
    rm -rf "${WORK:?}/$name-$RUN"
}

for RUN in $(seq 1 "$RUNS"); do
    run_system mariadb "$((PORT_BASE + 2 * RUN))"
    run_system onelog "$((PORT_BASE + 2 * RUN + 1))"
done

median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }

echo "### sysbench: onelog vs MariaDB"
echo
echo "Machine: $(nproc) CPUs ($(lscpu | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print $2; exit}')),"\
     "$(free -g | awk '/Mem:/ {print $2}') GiB RAM, kernel $(uname -r);"\
     "$(mariadbd --version | awk '{print $3}'), $(sysbench --version), onelog $("$ONELOG_BIN" --version | awk '{print $3}')."
echo "Settings: --tables=$TABLES --table-size=$TABLE_SIZE, ${SECONDS_PER_CELL}s per cell after a ${WARMUP_SECONDS}s warm-up, durability 1 on both (MariaDB: binlog ROW, sync_binlog=1); medians of $RUNS runs."
echo
echo "| workload | threads | MariaDB TPS | onelog TPS | onelog/MariaDB | MariaDB QPS | onelog QPS | MariaDB p95 ms | onelog p95 ms |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for w in $WORKLOADS; do
    for t in $THREADS; do
        mt=$(median "${TPS[mariadb,$w,$t]}"); ot=$(median "${TPS[onelog,$w,$t]}")
        echo "| $w | $t | $mt | $ot | $(ratio "$ot" "$mt") | $(median "${QPS[mariadb,$w,$t]}") | $(median "${QPS[onelog,$w,$t]}") | $(median "${P95[mariadb,$w,$t]}") | $(median "${P95[onelog,$w,$t]}") |"
    done
done
