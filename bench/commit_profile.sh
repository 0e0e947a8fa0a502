#!/bin/bash
# bench/commit_profile.sh DURABILITY THREADS [FSYNC_DELAY_US] [SECONDS]
#
# Where onelog's commits spend their time (issue 14 part 1): starts target/release/onelog on a
# fresh data directory under /tmp (127.0.0.1 only) with an injected fsync latency (the
# bench/fsync_delay LD_PRELOAD library, default 1000 us), prepares sysbench oltp_write_only
# (1 table x 100k rows), runs it SECONDS (default 15) with THREADS threads, and prints the
# SHOW GLOBAL STATUS phase counters over the run: commits per group, the share of wall time an
# fsync was in flight, each phase per record or per group, and the group-size histogram.
# ONELOG_BIN overrides the binary (default target/release/onelog: build it with cargo build
# --release -p onelog). Needs sysbench, the mariadb client, gcc.
set -euo pipefail
D=${1:?durability 0, 1 or 2}; T=${2:?threads}; DELAY=${3:-1000}; SECS=${4:-15}; PORT=${PORT:-13500}
REPO="$(cd "$(dirname "$0")/.." && pwd)"
OUT=$(mktemp -d /tmp/commit_profile.XXXXXX)
gcc -shared -fPIC -O2 -o "$OUT/fsync_delay.so" "$REPO/bench/fsync_delay/fsync_delay.c" -ldl
LD_PRELOAD="$OUT/fsync_delay.so" FSYNC_DELAY_US=$DELAY timeout $((SECS + 300)) "${ONELOG_BIN:-$REPO/target/release/onelog}" serve --datadir=$OUT/d --bind-address=127.0.0.1 --port=$PORT --server-id=1 --auth-root-authentication-method=normal --innodb-flush-log-at-trx-commit=$D --max-binlog-size=256M > "$OUT/srv.log" 2>&1 &
PID=$!
for i in $(seq 1 60); do mariadb --no-defaults --protocol=TCP -h127.0.0.1 -P$PORT -uroot -e "SELECT 1" >/dev/null 2>&1 && break; sleep 0.5; done
M="mariadb --no-defaults --protocol=TCP -h127.0.0.1 -P$PORT -uroot -N -B"
$M -e "CREATE DATABASE sb"
SB="sysbench oltp_write_only --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port=$PORT --mysql-user=root --mysql-db=sb --tables=1 --table-size=100000"
timeout 300 $SB prepare >/dev/null
snap() { $M -e "SHOW GLOBAL STATUS WHERE Variable_name LIKE 'Onelog_commit%' OR Variable_name LIKE 'Onelog_log_fsync%' OR Variable_name IN ('Binlog_commits','Binlog_group_commits','Onelog_log_fsyncs')"; }
snap > "$OUT/a.txt"
head -1 /proc/stat > "$OUT/cpu_a.txt"; SRV=$(pgrep -P $PID | head -1); awk '{print $14+$15}' /proc/$SRV/stat > "$OUT/srv_a.txt"
T0=$(date +%s.%N)
timeout $((SECS + 120)) $SB --threads=$T --time=$SECS --report-interval=0 run | grep -E "transactions:" 
T1=$(date +%s.%N)
head -1 /proc/stat > "$OUT/cpu_b.txt"; awk '{print $14+$15}' /proc/$SRV/stat > "$OUT/srv_b.txt"
snap > "$OUT/b.txt"
kill $PID; wait $PID 2>/dev/null || true
python3 - "$T0" "$T1" "$OUT" <<'PY'
import os, sys
t=float(sys.argv[2])-float(sys.argv[1])
a=dict(l.split('\t') for l in open(sys.argv[3]+'/a.txt').read().split('\n') if l)
b=dict(l.split('\t') for l in open(sys.argv[3]+'/b.txt').read().split('\n') if l)
d={k:int(b[k])-int(a[k]) for k in b}
c=d['Binlog_commits']; g=d['Binlog_group_commits']
ca=[int(x) for x in open(sys.argv[3]+'/cpu_a.txt').read().split()[1:]]
cb=[int(x) for x in open(sys.argv[3]+'/cpu_b.txt').read().split()[1:]]
dc=[y-x for x,y in zip(ca,cb)]
print(f"machine CPU busy {100*(1-(dc[3]+dc[4])/max(sum(dc),1)):.0f}% (all processes, {os.cpu_count()} CPUs)")
srv=(int(open(sys.argv[3]+'/srv_b.txt').read())-int(open(sys.argv[3]+'/srv_a.txt').read()))/os.sysconf('SC_CLK_TCK')
print(f"server CPU {srv:.1f}s = {srv*1e6/max(c,1):.0f} us per commit")
print(f"wall {t:.1f}s commits {c} groups {g} ({c/max(g,1):.1f}/group) fsyncs {d['Onelog_log_fsyncs']} fsync busy {d['Onelog_log_fsync_busy_us']/1e6/t*100:.0f}% of wall")
for k in ['queue_wait','encode','write','apply','sync','ack']:
    us=d[f'Onelog_commit_{k}_us']
    per = (us/c) if k=='queue_wait' else (us/max(g,1))
    print(f"  {k:10s} total {us/1e6:7.2f}s  {'per record' if k=='queue_wait' else 'per group '} {per:8.0f} us")
print("  groups by size:", {k.replace('Onelog_commit_groups_',''):v for k,v in d.items() if k.startswith('Onelog_commit_groups_')})
PY
rm -rf "$OUT"
