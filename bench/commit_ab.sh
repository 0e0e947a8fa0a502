#!/usr/bin/env bash
# Interleaved A/B of the commit pipeline between onelog binaries (issue 14 part 2).
#
#   bench/commit_ab.sh LATENCY_US "THREADS ..." ROUNDS BIN_A [BIN_B ...]
#
# Starts one server per binary at level 1 (D1) plus a D2 server of the last binary, all at
# once with the bench/fsync_delay preload sleeping LATENCY_US after every fsync, each on
# 127.0.0.1 with its own data directory under $AB_DIR (default /tmp/commit-ab; put it on a
# tmpfs so that a sync costs the injected latency only). Each gets `sysbench prepare` of
# 1 table x 100k rows; then for ROUNDS rounds and each thread count, oltp_write_only runs
# $AB_SECONDS (default 15) on each server in turn, so every binary sees the same machine
# state within a round. Prints one line per round and thread count: TPS per server, and for
# servers that have them the apply time per commit group and the part of it spent while
# an fsync ran (SHOW GLOBAL STATUS Onelog_commit_apply_us, Onelog_commit_apply_during_sync_us,
# Binlog_group_commits deltas). Needs sysbench, the mariadb client and cc.
set -u
LAT=$1; THREADS=$2; ROUNDS=$3; shift 3
[ $# -ge 1 ] || { echo "usage: $0 LATENCY_US \"THREADS...\" ROUNDS BIN_A [BIN_B ...]" >&2; exit 2; }
DIR=${AB_DIR:-/tmp/commit-ab}; SECS=${AB_SECONDS:-15}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$DIR"
SO=$DIR/fsync_delay.so
cc -O2 -shared -fPIC -o "$SO" "$HERE/fsync_delay/fsync_delay.c" -ldl || exit 1
bins=("$@" "${@: -1}"); n=${#bins[@]}
LETTERS=(A B C D E F G H)
[ $# -le ${#LETTERS[@]} ] || { echo "at most ${#LETTERS[@]} binaries" >&2; exit 2; }
names=(); durs=(); ports=(); pids=()
for i in $(seq 0 $((n - 1))); do
  if [ $i -eq $((n - 1)) ]; then names+=(D2); durs+=(2); else names+=("${LETTERS[$i]}"); durs+=(1); fi
  ports+=($((13601 + i)))
done
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap cleanup EXIT
for i in $(seq 0 $((n - 1))); do
  d=$DIR/${names[$i]}; rm -rf "$d"; mkdir -p "$d"
  FSYNC_DELAY_US=$LAT LD_PRELOAD=$SO "${bins[$i]}" serve --datadir="$d/data" --port=${ports[$i]} \
    --bind-address=127.0.0.1 --auth-root-authentication-method=normal \
    --innodb-flush-log-at-trx-commit=${durs[$i]} > "$d/log" 2>&1 &
  pids+=($!)
done
SB() { sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$1 --mysql-user=root \
  --mysql-db=sbtest --tables=1 --table-size=100000 "${@:2}"; }
st() { mariadb -h127.0.0.1 -P"$1" -uroot -N -e "SHOW GLOBAL STATUS LIKE '$2'" | awk '{print $2}'; }
for p in "${ports[@]}"; do
  up=0
  for _ in $(seq 120); do mariadb -h127.0.0.1 -P"$p" -uroot -e 'SELECT 1' >/dev/null 2>&1 && { up=1; break; }; sleep 0.5; done
  [ $up = 1 ] || { echo "server on port $p did not start" >&2; exit 1; }
  mariadb -h127.0.0.1 -P"$p" -uroot -e 'CREATE DATABASE sbtest'
  SB "$p" oltp_write_only --threads=4 prepare > /dev/null
  SB "$p" oltp_write_only --threads=8 --time=3 run > /dev/null
done
for r in $(seq "$ROUNDS"); do
  for th in $THREADS; do
    line="latency=${LAT}us threads=$th round $r:"
    for i in $(seq 0 $((n - 1))); do
      p=${ports[$i]}
      a0=$(st "$p" Onelog_commit_apply_us); s0=$(st "$p" Onelog_commit_apply_during_sync_us); g0=$(st "$p" Binlog_group_commits)
      tps=$(SB "$p" oltp_write_only --threads="$th" --time="$SECS" run | awk '/transactions:/ {gsub("\\(","",$3); print $3}')
      a1=$(st "$p" Onelog_commit_apply_us); s1=$(st "$p" Onelog_commit_apply_during_sync_us); g1=$(st "$p" Binlog_group_commits)
      g=$(( g1 - g0 > 0 ? g1 - g0 : 1 ))
      extra=" apply/group $(( (a1 - a0) / g ))us"
      [ -n "$s1" ] && [ -n "$s0" ] && extra="$extra, during a sync $(( (s1 - s0) / g ))us"
      line="$line ${names[$i]}=$tps ($extra)"
    done
    echo "$line"
  done
done
