#!/bin/bash
# bench/device/run_repl.sh SECONDS THREADS REPLICAS SEMISYNC — issue 11's
# `bench/run --replication` on a machine set up from the bundle (setup.sh); pin with
# BENCH_REPL_PRIMARY_CPUS / BENCH_REPL_REPLICA_CPUS; results and log under $OUT.
set -u
. "$(dirname "$0")/setup.sh"
mkdir -p /tmp/rwork
export BENCH_WORKDIR=/tmp/rwork BENCH_PORT_BASE=${BENCH_PORT_BASE:-32400}
export BENCH_REPL_SECONDS=$1 BENCH_REPL_THREADS="$2" BENCH_REPL_REPLICAS="$3" BENCH_REPL_SEMISYNC="$4"
export BENCH_TABLES=${BENCH_TABLES:-4} BENCH_TABLE_SIZE=${BENCH_TABLE_SIZE:-25000}
export BENCH_WARMUP=${BENCH_WARMUP:-3} BENCH_CELL_WARMUP=${BENCH_CELL_WARMUP:-2}
set -o pipefail
PYTHONUNBUFFERED=1 timeout "${RUN_LIMIT:-500}" bench/run --replication --onelog-bin /opt/devb/real/onelog \
    --results "$OUT/replication-device.json" --no-report 2>&1 | tee "$OUT/repl.log"
echo "rc=$?"
