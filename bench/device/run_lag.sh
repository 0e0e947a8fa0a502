#!/bin/bash
# bench/device/run_lag.sh NAME SECONDS BACKLOG REPLICAS — issue 12's `bench/run --replica-lag`
# on a machine set up from the bundle (setup.sh), onelog primary, the primary pinned to CPUs
# 0-7 and the replica to 8-15 (override with BENCH_REPL_PRIMARY_CPUS / _REPLICA_CPUS);
# BACKLOG 1 stops the replica during the load (apply speed from a backlog). Results and log
# under $OUT as NAME.json / NAME.log; RUN_LIMIT (s) bounds the run.
set -u
. "$(dirname "$0")/setup.sh"
mkdir -p "/tmp/lwork-$1"
export BENCH_WORKDIR="/tmp/lwork-$1" BENCH_PORT_BASE=${BENCH_PORT_BASE:-33400}
export BENCH_LAG_SECONDS=$2 BENCH_LAG_BACKLOG=$3 BENCH_LAG_REPLICAS="$4"
export BENCH_LAG_PRIMARIES=${BENCH_LAG_PRIMARIES:-onelog-engine}
export BENCH_LAG_SAMPLE_S=${BENCH_LAG_SAMPLE_S:-5} BENCH_LAG_IDLE_FACTOR=${BENCH_LAG_IDLE_FACTOR:-3}
export BENCH_REPL_PRIMARY_CPUS=${BENCH_REPL_PRIMARY_CPUS:-0-7} BENCH_REPL_REPLICA_CPUS=${BENCH_REPL_REPLICA_CPUS:-8-15}
export BENCH_TABLES=${BENCH_TABLES:-4} BENCH_TABLE_SIZE=${BENCH_TABLE_SIZE:-25000}
set -o pipefail
PYTHONUNBUFFERED=1 timeout "${RUN_LIMIT:-500}" bench/run --replica-lag --onelog-bin /opt/devb/real/onelog \
    --results "$OUT/$1.json" --no-report 2>&1 | tee "$OUT/$1.log"
echo "rc=$?"
