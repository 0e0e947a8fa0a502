#!/bin/bash
# bench/device/run_commit.sh SECONDS PARTS [THREADS] — issue 14's `bench/run --commit` on a
# machine set up from the bundle (setup.sh), the table's servers on a tmpfs of their own;
# results and log under $OUT. RUN_LIMIT (s) bounds the run.
set -u
. "$(dirname "$0")/setup.sh"
mkdir -p /tmp/cbtmpfs
if mount -t tmpfs -o size=24g tmpfs /tmp/cbtmpfs 2>>"$OUT/env.txt"; then td=/tmp/cbtmpfs; else td=""; echo "no tmpfs: data on disk" >> "$OUT/env.txt"; fi
export BENCH_COMMIT_SECONDS=$1 BENCH_COMMIT_TABLE_DIR=$td BENCH_COMMIT_THREADS="${3:-1 8 32}"
export BENCH_COMMIT_WARMUP=${BENCH_COMMIT_WARMUP:-5} BENCH_PORT_BASE=${BENCH_PORT_BASE:-31400}
set -o pipefail
PYTHONUNBUFFERED=1 timeout "${RUN_LIMIT:-500}" bench/run --commit --commit-parts="$2" \
    --onelog-bin /opt/devb/real/onelog --results "$OUT/commit-device.json" --no-report 2>&1 | tee "$OUT/run.log"
echo "rc=$?"
