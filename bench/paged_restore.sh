#!/usr/bin/env bash
# Backup, restore and the restored directory's first start on the paged table store with data
# larger than the memory budget: seconds and peak RSS of each step (docs/PAGED_STORE.md, step
# 6). A program that prints a markdown table, not a test (CI does not run it).
#
#   bench/paged_restore.sh
#   ROWS=200000 bench/paged_restore.sh                        # quick
#   BEFORE_BIN=/path/to/old/onelog bench/paged_restore.sh    # before vs after a change
#
# Settings (environment): ROWS (1000000, one sysbench table), BUDGET (128M,
# --innodb-buffer-pool-size), PORT (23710), ONELOG_BIN (default: cargo build --release),
# BEFORE_BIN (another onelog binary: its restore and first start are measured on the same
# backup first), STEP_TIMEOUT (900 s). One paged server on loopback is loaded by sysbench
# prepare and backed up once (by ONELOG_BIN); each binary then restores that backup into a
# fresh directory and starts it with the paged store and the same budget. Peak RSS of a tool
# comes from GNU time (`/usr/bin/time -f %M`); the server's from VmHWM in /proc once it
# answers and its sorted table checksum matches the primary's. Needs sysbench, the mariadb
# client and GNU time.
set -euo pipefail
cd "$(dirname "$0")/.."

ROWS=${ROWS:-1000000}
BUDGET=${BUDGET:-128M}
PORT=${PORT:-23710}
STEP_TIMEOUT=${STEP_TIMEOUT:-900}
if [[ -z ${ONELOG_BIN:-} ]]; then
    cargo build --release -p onelog >&2
    ONELOG_BIN=target/release/onelog
fi
work=$(mktemp -d /tmp/onelog-paged-restore.XXXXXX)
server=
cleanup() {
    [[ -n $server ]] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

client() { timeout "$STEP_TIMEOUT" mariadb -h127.0.0.1 -P"$PORT" -uroot "$@"; }

# start BIN DIR: a paged server on DIR, waited for; sets up_s to the seconds it took to answer.
start() {
    local start
    start=$(date +%s.%N)
    "$1" serve --datadir="$2" --port="$PORT" --bind-address=127.0.0.1 \
        --auth-root-authentication-method=normal --table-store=paged \
        --innodb-buffer-pool-size="$BUDGET" >>"$2.log" 2>&1 &
    server=$!
    local i
    for i in $(seq $((STEP_TIMEOUT * 10))); do
        client -e 'select 1' >/dev/null 2>&1 && break
        kill -0 "$server" 2>/dev/null || { echo "server on $2 exited: $(tail -3 "$2.log")" >&2; exit 1; }
        sleep 0.1
    done
    up_s=$(echo "$(date +%s.%N) - $start" | bc)
}

stop() {
    kill "$server"
    wait "$server" 2>/dev/null || true
    server=
}

checksum() { client -N -e 'CHECKSUM TABLE sbtest.sbtest1' | cut -f2; }
hwm_mib() { echo $(($(awk '/VmHWM/ {print $2}' "/proc/$server/status") / 1024)); }

# timed OUT CMD...: runs CMD under GNU time; OUT gets "seconds peak_kib".
timed() {
    local out=$1
    shift
    timeout "$STEP_TIMEOUT" /usr/bin/time -f '%e %M' -o "$out" "$@" >/dev/null 2>"$out.err" ||
        { cat "$out.err" >&2; exit 1; }
}

mkdir -p "$work/primary"
start "$ONELOG_BIN" "$work/primary/data"
client -e 'create database sbtest'
sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$PORT" --mysql-user=root \
    --mysql-db=sbtest --tables=1 --table-size="$ROWS" --threads=2 oltp_read_only prepare >/dev/null
sleep 15
want=$(checksum)
primary_hwm=$(hwm_mib)
timed "$work/backup.time" "$ONELOG_BIN" backup --host=127.0.0.1 --port="$PORT" --user=root \
    --target-dir="$work/backup"
read -r backup_s backup_kib <"$work/backup.time"
primary_after=$(hwm_mib)
stop
backup_mib=$(du -sm "$work/backup" | cut -f1)

echo "Backup, restore and first start, paged store, $ROWS rows, --innodb-buffer-pool-size=$BUDGET, $(nproc) CPUs"
echo
echo "Backup (by ONELOG_BIN): $backup_s s, $backup_mib MiB, the tool's peak RSS $((backup_kib / 1024)) MiB;" \
    "the primary's peak RSS $primary_hwm MiB before it, $primary_after MiB after."
echo
echo '| binary | restore s | restore peak RSS, MiB | first start s | first start peak RSS, MiB | checksum equal |'
echo '|---|---|---|---|---|---|'

# measure NAME BIN: one table row.
measure() {
    local name=$1 bin=$2 dir=$work/$1
    timed "$work/$name.restore.time" "$bin" restore --target-dir="$dir" "$work/backup"
    local restore_s restore_kib hwm got
    read -r restore_s restore_kib <"$work/$name.restore.time"
    start "$bin" "$dir"
    hwm=$(hwm_mib)
    got=$(checksum)
    stop
    printf '| %s | %.1f | %d | %.1f | %d | %s |\n' "$name" "$restore_s" $((restore_kib / 1024)) \
        "$up_s" "$hwm" "$([[ $got == "$want" ]] && echo yes || echo "no ($got, want $want)")"
}

[[ -n ${BEFORE_BIN:-} ]] && measure before "$BEFORE_BIN"
measure onelog "$ONELOG_BIN"
