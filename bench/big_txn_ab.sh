#!/usr/bin/env bash
# One big transaction, onelog binaries side by side (issue 14 part 3): `BEGIN; STATEMENT;
# COMMIT` on a fresh server with sysbench rows, the statement and the COMMIT timed apart, the
# commit path's phase counters of the COMMIT, the server's CPU time over both, and its RSS
# before and its peak. A
# program that prints a markdown table, not a test (CI does not run it).
#
#   bench/big_txn_ab.sh                                  # the build of this tree
#   BEFORE_BIN=/path/to/old/onelog bench/big_txn_ab.sh   # before vs after a change, in turn
#
# Settings (environment): SIZE (1000000 rows, one table), ROUNDS (2: each round runs every
# binary in turn, so a VM's drift hits both), STATEMENT (default `UPDATE sbtest1 SET k=k+1`),
# SERVER_OPTS (extra server options), PORT (23760), ONELOG_BIN (default: cargo build
# --release), BEFORE_BIN (another binary, run first in each round). Every run gets a fresh
# data directory on loopback. Needs sysbench and the mariadb client.
set -euo pipefail
cd "$(dirname "$0")/.."

SIZE=${SIZE:-1000000}
ROUNDS=${ROUNDS:-2}
STATEMENT=${STATEMENT:-UPDATE sbtest1 SET k=k+1}
PORT=${PORT:-23760}
if [[ -z ${ONELOG_BIN:-} ]]; then
    cargo build --release -p onelog >&2
    ONELOG_BIN=${CARGO_TARGET_DIR:-target}/release/onelog
fi
# shellcheck source=lib/paged_common.sh
. bench/lib/paged_common.sh
paged_workdir big-txn-ab

client() { timeout 600 mariadb --no-defaults --protocol=TCP -h127.0.0.1 -P"$PORT" -uroot "$@"; }
status() {
    client -N -B sb -e "SHOW GLOBAL STATUS WHERE Variable_name LIKE 'Onelog_commit_%_us' OR Variable_name = 'Onelog_log_rotation_wait_us'"
}
rss_kib() { awk -v f="$2" '$1 == f":" {print $2}' "/proc/$1/status"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# run NAME BINARY: one measurement; prints a table row.
run() {
    local name=$1 bin=$2 dir=$work/d
    rm -rf "$dir"
    # shellcheck disable=SC2086
    "$bin" serve --datadir="$dir" --bind-address=127.0.0.1 --port="$PORT" --server-id=1 \
        --auth-root-authentication-method=normal ${SERVER_OPTS:-} >"$work/server.log" 2>&1 &
    server=$!
    for _ in $(seq 1 120); do client -e 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.5; done
    client -e 'CREATE DATABASE sb'
    timeout 900 sysbench oltp_read_write --db-driver=mysql --mysql-host=127.0.0.1 \
        --mysql-port="$PORT" --mysql-user=root --mysql-db=sb --tables=1 \
        --table-size="$SIZE" prepare >/dev/null
    local before peak cpu
    before=$(rss_kib "$server" VmRSS)
    status >"$work/a"
    cpu=$(cpu_ticks "$server")
    # -vvv prints each statement's time ("(8.12 sec)").
    client -vvv sb -e "BEGIN; $STATEMENT; COMMIT" >"$work/out"
    cpu=$(($(cpu_ticks "$server") - cpu))
    status >"$work/b"
    peak=$(rss_kib "$server" VmHWM)
    kill "$server"
    wait "$server" 2>/dev/null || true
    server=
    python3 - "$name" "$work" "$before" "$peak" "$cpu" <<'PY'
import os, re, sys
name, work, before, peak = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
cpu = int(sys.argv[5]) / os.sysconf("SC_CLK_TCK")
secs = [float(x) for x in re.findall(r"\(([0-9.]+) sec\)", open(work + "/out").read())]
def counters(p):
    return {k: int(v) for k, v in (l.split("\t") for l in open(p).read().splitlines())}
a, b = counters(work + "/a"), counters(work + "/b")
phase = lambda k: (b[f"Onelog_commit_{k}_us"] - a[f"Onelog_commit_{k}_us"]) / 1e6
phases = " / ".join(f"{phase(k):.2f}" for k in ["encode", "write", "sync", "apply"])
rot = (b.get("Onelog_log_rotation_wait_us", 0) - a.get("Onelog_log_rotation_wait_us", 0)) / 1e6
print(f"| {name} | {secs[1]:.2f} | {secs[2]:.2f} | {cpu:.2f} | {phases} | {rot:.2f} | {before // 1024:,} | "
      f"+{(peak - before) // 1024:,} |")
PY
}

echo "$STATEMENT, $SIZE sysbench rows; $(nproc) CPUs; $(date -u +%F)"
echo
echo "| binary | statement s | COMMIT s | server CPU s (both) | COMMIT encode / write / sync / apply s | rotation wait s | RSS before MiB | peak over it MiB |"
echo "|---|---:|---:|---:|---|---:|---:|---:|"
for _ in $(seq 1 "$ROUNDS"); do
    [[ -n ${BEFORE_BIN:-} ]] && run before "$BEFORE_BIN"
    run after "$ONELOG_BIN"
done
