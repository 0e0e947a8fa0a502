#!/usr/bin/env python3
"""bench/lib/bench.py — the driver behind `bench/run` (issue 5). Not a test; CI does not run it.

Owns: building the fsync-delay preload library and checking it, starting and stopping
onelog and MariaDB 10.11 servers on temporary data directories (loopback TCP), running
sysbench and the custom clients, collecting counters, writing the raw results as JSON
(docs/bench/results.json, rewritten after every measurement so a partial run keeps what it
measured), and generating the report (the delimited section of docs/BENCHMARKS.md and the PNG
plots in docs/bench/).

Invariants:
- every server gets a fresh data directory per profile (system x durability x injected
  latency) and is stopped (or killed) before the next starts; only one server runs at a time
  (except in `--replication`, bench/lib/replication.py: one primary and its replicas, and
  `--replica-lag`, bench/lib/replica_lag.py: one primary and one replica; `--backup`,
  bench/lib/backup.py, and `--commit`, bench/lib/commit.py, also run one server at a time);
- per-cell counters are deltas taken immediately before and after the measured sysbench run
  (warm-ups are separate runs outside the window);
- a system the onelog binary cannot run (an option it does not know yet, a start failure) is
  recorded as "n/a" with the reason, never as a failure of the whole run;
- only the Python standard library is needed to measure; matplotlib only for the plots.
"""

import argparse
import datetime
import json
import os
import re
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(REPO, "bench")

# Must match struct counters in bench/fsync_delay/fsync_delay.c (16 little-endian uint64).
COUNTER_FIELDS = ["magic", "version", "delay_us", "fsync", "fdatasync", "syncfs", "sfr_wait",
                  "sfr_nowait", "dsync_writes", "dsync_bytes", "sync_ns", "delayed_calls",
                  "slept_ns", "r1", "r2", "r3"]
COUNTER_MAGIC = 0x594C44434E595346
SYNC_KINDS = ["fsync", "fdatasync", "syncfs", "sfr_wait", "dsync_writes"]

SYSTEMS = {
    "onelog-engine": {"kind": "onelog", "label": "onelog engine", "storage": "engine"},
    "onelog-file": {"kind": "onelog", "label": "onelog file", "storage": "file"},
    "onelog-mirror": {"kind": "onelog", "label": "onelog engine+mirror", "storage": "engine",
                      "mirror": True},
    "mariadb-binlog": {"kind": "mariadb", "label": "MariaDB binlog", "binlog": True},
    "mariadb-nobinlog": {"kind": "mariadb", "label": "MariaDB no binlog", "binlog": False},
}
SYSTEM_ORDER = list(SYSTEMS)
# durability profile -> (innodb_flush_log_at_trx_commit, sync_binlog)
DURABILITY = {"D1": (1, 1), "D2": (2, 0), "D3": (0, 0)}
BASE = ("mariadb-binlog", "D1")  # the ratios' denominator, as in the seeds

def log(msg):
    line = f"[{time.strftime('%H:%M:%S')}] {msg}"
    print(line, file=sys.stderr, flush=True)


class StartError(Exception):
    pass


# ----------------------------------------------------------------------------- configuration

def env_list(name, default):
    v = os.environ.get(name)
    return v.split() if v else default


def env_int(name, default):
    v = os.environ.get(name)
    return int(v) if v else default


def make_config(args):
    q = args.quick
    c = {
        "mode": "quick" if q else "full",
        "seconds": env_int("BENCH_SECONDS", 3 if q else 30),
        "cell_warmup": env_int("BENCH_CELL_WARMUP", 0 if q else 5),
        "profile_warmup": env_int("BENCH_WARMUP", 2 if q else 10),
        "tables": env_int("BENCH_TABLES", 2 if q else 8),
        "table_size": env_int("BENCH_TABLE_SIZE", 5000 if q else 100000),
        "threads": [int(t) for t in env_list("BENCH_THREADS", ["1", "8", "32"] if q else ["1", "8", "32", "64"])],
        "workloads": env_list("BENCH_WORKLOADS", ["oltp_write_only", "oltp_insert"] if q else
                              ["oltp_write_only", "oltp_insert", "oltp_update_non_index", "oltp_read_write"]),
        "durability": env_list("BENCH_DURABILITY", ["D1"] if q else ["D1", "D2", "D3"]),
        "latencies_us": [int(x) for x in env_list("BENCH_LATENCIES_US", ["0", "1000"])],
        "systems": env_list("BENCH_SYSTEMS", SYSTEM_ORDER),
        "segment_size": os.environ.get("BENCH_MAX_BINLOG_SIZE", "64M" if q else "256M"),
        "rot_seconds": env_int("BENCH_ROT_SECONDS", 8 if q else 60),
        "rot_size": os.environ.get("BENCH_ROT_SIZE", "1M" if q else "8M"),
        "rot_threads": env_int("BENCH_ROT_THREADS", 8),
        "rot_latency_us": env_int("BENCH_ROT_LATENCY_US", 0),
        "large_rows": env_int("BENCH_LARGE_ROWS", 100000),
        "crash_seconds": env_int("BENCH_CRASH_SECONDS", 4 if q else 20),
        "crash_writers": env_int("BENCH_CRASH_WRITERS", 4),
        "crash_threads": env_int("BENCH_CRASH_THREADS", 8),
        "seed": env_int("BENCH_SEED", 1),
        "runs": env_int("BENCH_RUNS", 1),
        "port_base": env_int("BENCH_PORT_BASE", 27400),
        "sections": args.only.split(",") if args.only else ["matrix", "rotation", "large", "crash"],
    }
    extra = os.environ.get("BENCH_EXTRA_LATENCY_US")  # e.g. 5000: the optional 5 ms column
    if extra:
        c["latencies_us"] += [int(x) for x in extra.split()]
    return c


# ----------------------------------------------------------------------------- helpers

def proc_status_bytes(pid, field):
    """A `kB` field of /proc/<pid>/status (VmRSS, VmHWM) in bytes; None if unreadable."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def sh(cmd, **kw):
    return subprocess.run(cmd, shell=True, capture_output=True, text=True, **kw).stdout.strip()


def free_port(start):
    p = start
    while True:
        s = socket.socket()
        try:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", p))
            return p
        except OSError:
            p += 1
        finally:
            s.close()


def client_args(port):
    return ["mariadb", "--no-defaults", "--protocol=TCP", "-h127.0.0.1", f"-P{port}", "-uroot"]


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


class Env:
    """Work directory, the built preload library, the onelog binary and its capabilities."""

    def __init__(self, cfg, args):
        self.cfg = cfg
        self.work = tempfile.mkdtemp(prefix="onelog-bench.", dir=os.environ.get("BENCH_WORKDIR"))
        self.keep = args.keep
        self.port = cfg["port_base"]
        self.so = None
        self.onelog = None
        self.caps = {}
        self.servers = []  # every Server made, so an interrupted run kills what it started

    def next_port(self):
        self.port = free_port(self.port + 1)
        return self.port

    def cleanup(self):
        for srv in self.servers:
            srv.kill9()
        if not self.keep:
            shutil.rmtree(self.work, ignore_errors=True)


# ----------------------------------------------------------------------------- preload library

def build_preload(env):
    build = os.path.join(env.work, "build")
    os.makedirs(build, exist_ok=True)
    so = os.path.join(build, "fsync_delay.so")
    st = os.path.join(build, "fsync_selftest")
    src = os.path.join(BENCH, "fsync_delay")
    for cmd in (["gcc", "-O2", "-Wall", "-Wextra", "-shared", "-fPIC", "-o", so,
                 os.path.join(src, "fsync_delay.c"), "-ldl"],
                ["gcc", "-O2", "-Wall", "-o", st, os.path.join(src, "selftest.c")]):
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"bench/run: building the preload library failed:\n{' '.join(cmd)}\n{r.stderr}")
    env.so = so
    return selfcheck(env, st)


def read_counters(path):
    try:
        with open(path, "rb") as f:
            data = f.read(128)
    except OSError:
        return None
    if len(data) < 128:
        return None
    vals = dict(zip(COUNTER_FIELDS, struct.unpack("<16Q", data)))
    if vals["magic"] != COUNTER_MAGIC:
        return None
    return vals


def counter_delta(a, b):
    if a is None or b is None:
        return None
    d = {k: b[k] - a[k] for k in COUNTER_FIELDS[3:]}
    d["syncs"] = sum(d[k] for k in SYNC_KINDS)
    return d


def selfcheck(env, selftest):
    """The library counts 10 fdatasyncs as 10 and delays each by at least the delay."""
    delay = 2000
    cdir = os.path.join(env.work, "selfcheck")
    os.makedirs(cdir, exist_ok=True)
    cfile = os.path.join(cdir, "counts")
    e = dict(os.environ, LD_PRELOAD=env.so, FSYNC_DELAY_US=str(delay), FSYNC_COUNT_FILE=cfile)
    t0 = time.monotonic()
    r = subprocess.run([selftest, cdir], env=e, capture_output=True, text=True)
    wall_us = (time.monotonic() - t0) * 1e6
    c = read_counters(cfile)
    expect = {"fdatasync": 10, "fsync": 3, "sfr_wait": 1, "sfr_nowait": 1, "dsync_writes": 4,
              "delayed_calls": 18}
    problems = []
    if r.returncode != 0 or c is None:
        problems.append(f"selftest failed: rc={r.returncode} {r.stderr.strip()} counters={c}")
    else:
        for k, v in expect.items():
            if c[k] != v:
                problems.append(f"{k}: counted {c[k]}, expected {v}")
        inner_us = int(r.stdout.strip() or 0)
        if inner_us < 18 * delay:
            problems.append(f"18 delayed calls took {inner_us} us < 18 x {delay} us")
    if problems:
        sys.exit("bench/run: fsync_delay self-check failed: " + "; ".join(problems))
    res = {"delay_us": delay, "counts": {k: c[k] for k in expect}, "elapsed_us": int(r.stdout.strip()),
           "mean_slept_us": round(c["slept_ns"] / 1000 / max(1, c["delayed_calls"]), 1),
           "wall_us": int(wall_us)}
    log(f"fsync_delay self-check ok: 10 fdatasync counted 10; 18 delayed calls took "
        f"{res['elapsed_us']} us (>= {18 * delay}); mean sleep {res['mean_slept_us']} us")
    return res


# ----------------------------------------------------------------------------- onelog binary

def find_onelog(env, args):
    b = args.onelog_bin or os.environ.get("ONELOG_BIN")
    if not b and not any(SYSTEMS[s]["kind"] == "onelog" for s in env.cfg["systems"]):
        env.caps = {"binlog_storage": False, "sync_binlog": False, "mirror": False,
                    "dynamic_fsync": False, "version": "onelog not measured"}
        return
    if not b:
        log("building onelog: cargo build --release -p onelog")
        r = subprocess.run(["cargo", "build", "--release", "-p", "onelog"], cwd=REPO)
        if r.returncode != 0:
            sys.exit("bench/run: cargo build --release -p onelog failed")
        tdir = os.environ.get("CARGO_TARGET_DIR") or os.path.join(REPO, "target")
        b = os.path.join(tdir, "release", "onelog")
    if not os.access(b, os.X_OK):
        sys.exit(f"bench/run: onelog binary {b} not found")
    env.onelog = os.path.abspath(b)
    help_text = subprocess.run([env.onelog, "--help"], capture_output=True, text=True).stdout
    dyn = sh(f"nm -D {env.onelog} 2>/dev/null | grep -cE ' U (fdatasync|fsync)'")
    env.caps = {
        "binlog_storage": "--binlog-storage" in help_text,
        "sync_binlog": "--sync-binlog" in help_text,
        "mirror": "--binlog-file-mirror" in help_text,
        "dynamic_fsync": dyn not in ("", "0"),
        "version": sh(f"{env.onelog} --version"),
    }
    log(f"onelog: {env.onelog} ({env.caps['version']}); options: binlog-storage={env.caps['binlog_storage']} "
        f"sync-binlog={env.caps['sync_binlog']} binlog-file-mirror={env.caps['mirror']}")


def unavailable(env, system):
    """Why this system cannot run with this binary, or None."""
    s = SYSTEMS[system]
    if s["kind"] != "onelog":
        return None
    if s["storage"] == "file" and not (env.caps["binlog_storage"] and env.caps["sync_binlog"]):
        return "this onelog binary has no --binlog-storage/--sync-binlog (issue 4 not built in yet)"
    if s.get("mirror") and not env.caps["mirror"]:
        return "this onelog binary has no --binlog-file-mirror (issue 4 not built in yet)"
    return None


# ----------------------------------------------------------------------------- servers

class Server:
    def __init__(self, env, system, flush, sync_binlog, latency_us=0, max_binlog_size=None,
                 preload=True, extra=None):
        self.env = env
        self.system = system
        self.spec = SYSTEMS[system]
        self.flush = flush
        self.sync_binlog = sync_binlog
        self.latency_us = latency_us
        self.max_binlog_size = max_binlog_size or env.cfg["segment_size"]
        self.preload = preload
        self.extra = list(extra or [])  # appended last: a later option overrides an earlier one
        self.wrap = []  # a command prefix, e.g. ["taskset", "-c", "2-3"]
        self.dir = tempfile.mkdtemp(dir=env.work, prefix=f"{system}-")
        self.data = os.path.join(self.dir, "data")
        self.port = env.next_port()
        self.count_file = os.path.join(self.dir, "fsync-counts")
        self.logpath = os.path.join(self.dir, "server.log")
        self.proc = None
        self.installed = False
        env.servers.append(self)

    def command(self):
        if self.spec["kind"] == "onelog":
            cmd = [self.env.onelog, "serve", f"--datadir={self.data}", f"--port={self.port}",
                   "--bind-address=127.0.0.1", "--max-connections=500",
                   f"--innodb-flush-log-at-trx-commit={self.flush}",
                   f"--max-binlog-size={self.max_binlog_size}",
                   # root over TCP without a password, as MariaDB's install below gives it
                   # (onelog's default root is unix_socket only)
                   "--auth-root-authentication-method=normal"]
            if self.spec["storage"] == "file":
                cmd += ["--binlog-storage=file", f"--sync-binlog={self.sync_binlog}"]
            if self.spec.get("mirror"):
                cmd += ["--binlog-file-mirror=ON"]
            return cmd + self.extra
        user = sh("id -un")
        cmd = ["mariadbd", "--no-defaults", f"--datadir={self.data}",
               f"--socket={self.dir}/mariadb.sock", f"--port={self.port}",
               "--bind-address=127.0.0.1", f"--user={user}", "--max-connections=500",
               "--skip-name-resolve", "--innodb-buffer-pool-size=2G",
               "--innodb-log-file-size=256M",
               f"--innodb-flush-log-at-trx-commit={self.flush}",
               f"--max-binlog-size={self.max_binlog_size}", f"--pid-file={self.dir}/mariadb.pid"]
        if self.spec["binlog"]:
            cmd += [f"--log-bin={self.data}/mariadb-bin", "--binlog-format=ROW",
                    f"--sync-binlog={self.sync_binlog}", "--server-id=1"]
        return cmd + self.extra

    def install(self):
        if self.spec["kind"] == "mariadb" and not self.installed:
            r = subprocess.run(["mariadb-install-db", "--no-defaults", f"--datadir={self.data}",
                                f"--user={sh('id -un')}", "--auth-root-authentication-method=normal"],
                               capture_output=True, text=True)
            if r.returncode != 0:
                raise StartError(f"mariadb-install-db failed: {r.stdout[-2000:]}{r.stderr[-2000:]}")
        self.installed = True

    def start(self, timeout=300):
        """Starts the server and returns the seconds from spawn to the first successful query."""
        self.install()
        e = dict(os.environ)
        if self.preload:
            e.update(LD_PRELOAD=self.env.so, FSYNC_DELAY_US=str(self.latency_us),
                     FSYNC_COUNT_FILE=self.count_file)
        logf = open(self.logpath, "ab")
        t0 = time.monotonic()
        self.proc = subprocess.Popen(self.wrap + self.command(), stdout=logf, stderr=subprocess.STDOUT, env=e,
                                     start_new_session=True)
        logf.close()
        while time.monotonic() - t0 < timeout:
            if self.proc.poll() is not None:
                self.proc = None
                raise StartError(f"{self.system} exited during startup: {self.log_tail()}")
            r = subprocess.run(client_args(self.port) + ["-e", "SELECT 1"], capture_output=True)
            if r.returncode == 0:
                return time.monotonic() - t0
            time.sleep(0.03)
        self.kill9()
        raise StartError(f"{self.system} not ready after {timeout}s: {self.log_tail()}")

    def log_tail(self, n=1500):
        try:
            with open(self.logpath, "rb") as f:
                return f.read()[-n:].decode("utf-8", "replace")
        except OSError:
            return ""

    def stop(self, timeout=180):
        if not self.proc:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            log(f"{self.system} did not stop in {timeout}s; killing it")
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def kill9(self):
        if self.proc:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def remove(self):
        self.stop()
        if not self.env.keep:
            shutil.rmtree(self.dir, ignore_errors=True)

    def q(self, sql, timeout=900):
        r = subprocess.run(client_args(self.port) + ["-N", "-B", "-e", sql], capture_output=True,
                           text=True, timeout=timeout)
        if r.returncode != 0:
            raise RuntimeError(f"{self.system}: {sql[:80]}: {r.stderr.strip()}")
        return [line.split("\t") for line in r.stdout.splitlines()]

    def status(self):
        try:
            return {row[0]: row[1] for row in self.q("SHOW GLOBAL STATUS") if len(row) >= 2}
        except RuntimeError:
            return {}

    def counters(self):
        return read_counters(self.count_file)

    def log_files(self):
        """(classic binlog files, onelog segments): lists of (name, size) in the datadir."""
        classic, segs = [], []
        # The datadir itself and one level below (onelog keeps segments in <datadir>/binlog/).
        dirs = [self.data]
        try:
            dirs += [os.path.join(self.data, n) for n in sorted(os.listdir(self.data))
                     if os.path.isdir(os.path.join(self.data, n))]
        except OSError:
            return classic, segs
        for d in dirs:
            try:
                names = sorted(os.listdir(d))
            except OSError:
                continue
            for n in names:
                p = os.path.join(d, n)
                try:
                    if re.fullmatch(r"(binlog|mariadb-bin)\.\d{6}", n):
                        classic.append((n, os.path.getsize(p)))
                    elif re.fullmatch(r"binlog-\d{6}\.olog", n):
                        segs.append((n, os.path.getsize(p)))
                except OSError:
                    pass
        return classic, segs

    def rotations_files(self):
        classic, segs = self.log_files()
        if self.spec["kind"] == "onelog" and self.spec["storage"] == "engine":
            return len(segs)
        return len(classic)


def snapshot(srv):
    """Counters the per-cell deltas are computed from."""
    classic, _ = srv.log_files()
    return {"t": time.monotonic(), "counters": srv.counters(), "status": srv.status(),
            "classic_bytes": sum(s for _, s in classic)}


def num(st, k):
    try:
        return int(st.get(k))
    except (TypeError, ValueError):
        return None


def status_delta(a, b, k):
    x, y = num(a, k), num(b, k)
    return None if x is None or y is None else y - x


def log_bytes(srv, s0, s1):
    """(engine log or redo bytes, binlog file bytes) written between two snapshots."""
    a, b = s0["status"], s1["status"]
    binlog_files = s1["classic_bytes"] - s0["classic_bytes"]
    if srv.spec["kind"] == "onelog":
        eng = status_delta(a, b, "Onelog_end_lsn")
        if eng is None:
            eng = status_delta(a, b, "Binlog_bytes_written")
    else:
        eng = status_delta(a, b, "Innodb_os_log_written")
    return eng, binlog_files


# ----------------------------------------------------------------------------- sysbench

def sysbench(port, workload, threads, seconds, cfg, command="run", tables=None, table_size=None,
             report_interval=0, background=False, db="sbtest", env=None):
    """workload: a sysbench test name or the path of a Lua script; env: the process environment
    (default: this one's)."""
    args = ["sysbench", workload, "--db-driver=mysql", "--mysql-host=127.0.0.1",
            f"--mysql-port={port}", "--mysql-user=root", f"--mysql-db={db}",
            f"--tables={tables or cfg['tables']}", f"--table-size={table_size or cfg['table_size']}",
            f"--threads={threads}", f"--time={seconds}", "--events=0",
            f"--rand-seed={cfg['seed']}", "--rand-type=uniform", "--percentile=99",
            "--histogram=on", f"--report-interval={report_interval}", command]
    if background:
        return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True, env=env)
    r = subprocess.run(args, capture_output=True, text=True, timeout=seconds + 1800, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"sysbench {workload} {command} failed: {(r.stdout + r.stderr)[-1500:]}")
    return r.stdout


def parse_sysbench(out):
    res = {}
    m = re.search(r"transactions:\s+(\d+)\s+\(([\d.]+) per sec", out)
    if m:
        res["txns"], res["tps"] = int(m.group(1)), float(m.group(2))
    m = re.search(r"ignored errors:\s+(\d+)", out)
    res["errors"] = int(m.group(1)) if m else None
    m = re.search(r"99th percentile:\s+([\d.]+)", out)
    res["sb_p99"] = float(m.group(1)) if m else None
    m = re.search(r"avg:\s+([\d.]+)", out)
    res["avg_ms"] = float(m.group(1)) if m else None
    hist = []
    in_hist = False
    for line in out.splitlines():
        if line.startswith("Latency histogram"):
            in_hist = True
            continue
        if in_hist:
            hm = re.match(r"\s*([\d.]+)\s+\|[\s*]*?(\d+)\s*$", line)
            if hm:
                hist.append((float(hm.group(1)), int(hm.group(2))))
            elif hist and not line.strip():
                break
    total = sum(c for _, c in hist)

    def pct(p):
        if not total:
            return None
        need, acc = p / 100 * total, 0
        for v, c in hist:
            acc += c
            if acc >= need:
                return v
        return hist[-1][0]

    # p99: sysbench's own (--percentile=99); p50 and p95 from its histogram (the same data: the
    # histogram-derived p99 agrees with sysbench's to one bucket, kept as hist_p99).
    res["p50"], res["p95"], res["hist_p99"] = pct(50), pct(95), pct(99)
    res["p99"] = res["sb_p99"] if res["sb_p99"] is not None else res["hist_p99"]
    res["intervals"] = [float(x) for x in re.findall(r"^\[ *\d+s \] thds: \d+ tps: ([\d.]+)", out, re.M)]
    res["interval_p99"] = [float(x) for x in re.findall(r"^\[ *\d+s \] thds: .*lat \(ms,99%\): ([\d.]+)", out, re.M)]
    return res


def prepare(srv, cfg, tables=None, table_size=None, create_db=True, db="sbtest"):
    if create_db:
        srv.q(f"CREATE DATABASE {db}")
    t = tables or cfg["tables"]
    sysbench(srv.port, "oltp_read_write", min(t, 8), 0, cfg, "prepare", tables=t, table_size=table_size, db=db)


# ----------------------------------------------------------------------------- results store

class Results:
    def __init__(self, path, cfg, machine, selfcheck_res, env):
        self.path = path
        self.data = {"generated": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                     "config": cfg, "machine": machine, "selfcheck": selfcheck_res,
                     "onelog": env.caps, "matrix": [], "rotation": [], "large": [], "crash": [],
                     "na": {}}
        self.save()

    def save(self):
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.data, f, indent=1)
        os.replace(tmp, self.path)


def describe_machine(env):
    def lscpu(field):
        return sh(f"lscpu | awk -F: '/^{field}:/ {{gsub(/^ +/, \"\", $2); print $2; exit}}'")
    dev = sh(f"df --output=source {env.work} | tail -1")
    return {
        "cpu_model": lscpu("Model name"),
        "cpus": os.cpu_count(),
        "cores_per_socket": lscpu("Core\\(s\\) per socket"),
        "threads_per_core": lscpu("Thread\\(s\\) per core"),
        "mem_gib": round(int(sh("awk '/MemTotal/ {print $2}' /proc/meminfo") or 0) / 1048576, 1),
        "disk": f"{dev} ({sh(f'df --output=fstype {env.work} | tail -1')}, "
                f"{sh(f'df -h --output=size {env.work} | tail -1').strip()}); "
                f"rotational={sh('cat /sys/block/' + os.path.basename(dev).rstrip('0123456789') + '/queue/rotational 2>/dev/null') or '?'}",
        "kernel": sh("uname -r"),
        # a VM shows the hypervisor CPU flag; systemd-detect-virt names the innermost layer (docker, kvm)
        "hypervisor": "hypervisor" in sh("grep -m1 '^flags' /proc/cpuinfo").split(),
        "virt": sh("systemd-detect-virt 2>/dev/null") or None,
        "loadavg_before": open("/proc/loadavg").read().split()[:3],
        "mariadb": sh("mariadbd --version"),
        "sysbench": sh("sysbench --version"),
        "gcc": sh("gcc --version | head -1"),
        "python": sys.version.split()[0],
        "workdir": env.work,
        "git": sh(f"git -C {REPO} rev-parse --short HEAD") + (
            " + uncommitted changes" if sh(f"git -C {REPO} status --porcelain --untracked-files=no") else ""),
    }


# ----------------------------------------------------------------------------- matrix

def run_matrix(env, cfg, res):
    for run in range(1, cfg["runs"] + 1):
        run_matrix_once(env, cfg, res, run)


def run_matrix_once(env, cfg, res, run):
    for dur in cfg["durability"]:
        flush, syncb = DURABILITY[dur]
        for lat in cfg["latencies_us"]:
            for system in cfg["systems"]:
                why = unavailable(env, system)
                key = f"{system}/{dur}/{lat}"
                if why:
                    res.data["na"][key] = why
                    res.save()
                    continue
                srv = Server(env, system, flush, syncb, lat)
                try:
                    log(f"matrix{f' run {run}' if cfg['runs'] > 1 else ''}: {system} {dur} latency={lat}us: "
                        "start, prepare, warm-up")
                    srv.start()
                    res.data.setdefault("profiles", {})[key] = server_vars(srv)
                    prepare(srv, cfg)
                    if cfg["profile_warmup"]:
                        sysbench(srv.port, "oltp_read_write", 8, cfg["profile_warmup"], cfg)
                    for w in cfg["workloads"]:
                        for t in cfg["threads"]:
                            if cfg["cell_warmup"]:
                                sysbench(srv.port, w, t, cfg["cell_warmup"], cfg)
                            s0 = snapshot(srv)
                            out = sysbench(srv.port, w, t, cfg["seconds"], cfg)
                            s1 = snapshot(srv)
                            cell = measure_cell(srv, s0, s1, out)
                            cell.update(system=system, durability=dur, latency_us=lat, workload=w, threads=t,
                                        run=run)
                            res.data["matrix"].append(cell)
                            if dur == "D1" and not cell.get("fsyncs"):
                                res.data.setdefault("warnings", []).append(
                                    f"{system} {dur} {w} {t} threads: the preload library counted no sync at "
                                    "durability 1: is the server linked dynamically against glibc?")
                            res.save()
                            log(f"  {w} threads={t}: {cell.get('tps')} tps p95 {cell.get('p95')} p99 "
                                f"{cell.get('p99')} ms, {fmt(cell.get('fsyncs_per_txn'), 3)} fsyncs/txn, "
                                f"{fmt(cell.get('log_bytes_per_txn'), 0)} log B/txn; real sync {cell.get('mean_sync_us')} us, "
                                f"delay {cell.get('mean_delay_us')} us")
                except (StartError, RuntimeError, subprocess.TimeoutExpired) as e:
                    log(f"matrix: {key}: {e}")
                    res.data["na"][key] = f"failed: {str(e)[:600]}"
                    res.save()
                finally:
                    srv.remove()


def server_vars(srv):
    """The durability-relevant settings as the running server reports them (proves the options
    took effect); a variable the server does not know is left out."""
    names = ["innodb_flush_log_at_trx_commit", "sync_binlog", "log_bin", "binlog_format",
             "max_binlog_size", "binlog_storage", "binlog_file_mirror", "innodb_flush_method",
             "innodb_log_file_size", "innodb_buffer_pool_size", "version"]
    out = {}
    for n in names:
        try:
            rows = srv.q(f"SELECT @@global.{n}")
            if rows and rows[0]:
                out[n] = rows[0][0]
        except (RuntimeError, subprocess.TimeoutExpired):
            pass
    return out


def measure_cell(srv, s0, s1, out):
    r = parse_sysbench(out)
    r.pop("intervals", None)
    r.pop("interval_p99", None)
    txns = r.get("txns") or 0
    d = counter_delta(s0["counters"], s1["counters"])
    eng, bfiles = log_bytes(srv, s0, s1)
    r["fsyncs"] = d["syncs"] if d else None
    r["fsync_kinds"] = {k: d[k] for k in SYNC_KINDS} if d else None
    r["fsyncs_per_txn"] = d["syncs"] / txns if d and txns else None
    r["mean_sync_us"] = round(d["sync_ns"] / 1000 / d["syncs"], 1) if d and d["syncs"] else None
    r["mean_delay_us"] = round(d["slept_ns"] / 1000 / d["delayed_calls"], 1) if d and d["delayed_calls"] else None
    r["engine_log_bytes_per_txn"] = eng / txns if eng is not None and txns else None
    r["binlog_file_bytes_per_txn"] = bfiles / txns if txns else None
    r["log_bytes_per_txn"] = ((eng or 0) + bfiles) / txns if txns and eng is not None else None
    st = {}
    for k in ("Onelog_log_fsyncs", "Onelog_engine_log_fsyncs", "Onelog_binlog_file_fsyncs",
              "Onelog_mirror_fsyncs", "Binlog_group_commits", "Binlog_commits",
              "Innodb_os_log_fsyncs", "Innodb_data_fsyncs"):
        v = status_delta(s0["status"], s1["status"], k)
        if v is not None:
            st[k] = v
    r["status_deltas"] = st
    return r


def fmt(v, digits=2):
    if v is None:
        return "n/a"
    if digits == 0:
        return f"{v:.0f}"
    return f"{v:.{digits}f}"


# ----------------------------------------------------------------------------- rotation stalls

ROT_VARIANTS = [
    ("onelog-engine", None, "onelog engine"),
    ("onelog-file", 0, "onelog file, sync_binlog=0"),
    ("onelog-file", 1, "onelog file, sync_binlog=1"),
    ("mariadb-binlog", 0, "MariaDB binlog, sync_binlog=0"),
    ("mariadb-binlog", 1, "MariaDB binlog, sync_binlog=1"),
]


def run_rotation(env, cfg, res):
    for system, syncb, label in ROT_VARIANTS:
        if system not in cfg["systems"] and not os.environ.get("BENCH_ROT_ALL"):
            continue
        why = unavailable(env, system)
        entry = {"system": system, "sync_binlog": syncb, "label": label,
                 "max_binlog_size": cfg["rot_size"], "threads": cfg["rot_threads"],
                 "latency_us": cfg["rot_latency_us"], "seconds": cfg["rot_seconds"]}
        if why:
            entry["na"] = why
            res.data["rotation"].append(entry)
            res.save()
            continue
        srv = Server(env, system, 1, 1 if syncb is None else syncb, cfg["rot_latency_us"],
                     max_binlog_size=cfg["rot_size"])
        try:
            log(f"rotation: {label}, max_binlog_size={cfg['rot_size']}")
            srv.start()
            prepare(srv, cfg)
            sysbench(srv.port, "oltp_write_only", cfg["rot_threads"], 2, cfg)
            f0 = srv.rotations_files()
            s0 = snapshot(srv)
            out = sysbench(srv.port, "oltp_write_only", cfg["rot_threads"], cfg["rot_seconds"], cfg,
                           report_interval=1)
            s1 = snapshot(srv)
            f1 = srv.rotations_files()
            p = parse_sysbench(out)
            per_sec = p["intervals"]
            body = per_sec[1:] if len(per_sec) > 2 else per_sec  # the first second ramps up
            med = median(body)
            worst = min(body) if body else None
            d = counter_delta(s0["counters"], s1["counters"])
            entry.update(per_second=per_sec, per_second_p99=p.get("interval_p99"),
                         worst_second_p99=max(p["interval_p99"][1:] or p["interval_p99"] or [0]) or None,
                         median_tps=med, worst_tps=worst,
                         worst_over_median=(worst / med if med else None), rotations=f1 - f0,
                         tps=p.get("tps"), p99=p.get("p99"),
                         fsyncs_per_txn=(d["syncs"] / p["txns"] if d and p.get("txns") else None))
            log(f"  median {fmt(med, 0)} tps, worst second {fmt(worst, 0)} "
                f"({fmt(entry['worst_over_median'])} of median), {f1 - f0} rotations")
        except (StartError, RuntimeError, subprocess.TimeoutExpired) as e:
            log(f"rotation: {label}: {e}")
            entry["na"] = f"failed: {str(e)[:600]}"
        finally:
            srv.remove()
        res.data["rotation"].append(entry)
        res.save()


# ----------------------------------------------------------------------------- interactive client

class Cli:
    """One `mariadb` client process fed statements one by one; a statement counts as done
    (acknowledged) only once the marker SELECT sent after it has come back."""

    def __init__(self, port):
        self.p = subprocess.Popen(client_args(port) + ["-N", "-B", "--unbuffered"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, bufsize=1)
        self.n = 0

    def run(self, sql):
        self.n += 1
        mark = f"__mark{self.n}__"
        try:
            self.p.stdin.write(f"{sql};\nSELECT '{mark}';\n")
            self.p.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            return None
        lines = []
        while True:
            line = self.p.stdout.readline()
            if not line:
                return None
            line = line.rstrip("\n")
            if line == mark:
                return lines
            lines.append(line)

    def close(self):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


# ----------------------------------------------------------------------------- large transaction

LARGE_VARIANTS = [("onelog-engine", "onelog engine"), ("onelog-file", "onelog file, sync_binlog=1"),
                  ("mariadb-binlog", "MariaDB binlog, sync_binlog=1")]
HEADER_EVENTS = {"Format_desc", "Gtid_list", "Binlog_checkpoint", "Rotate", "Stop", "Start_encryption"}


def binlog_event_bytes_since(srv, file0, pos0):
    """Sum of the lengths of the events written after (file0, pos0), from SHOW BINLOG EVENTS
    (End_log_pos - Pos), leaving out file header events."""
    files = [r[0] for r in srv.q("SHOW BINARY LOGS")]
    if file0 not in files:
        return None
    total = 0
    for f in files[files.index(file0):]:
        for row in srv.q(f"SHOW BINLOG EVENTS IN '{f}'"):
            if len(row) < 5:
                continue
            pos, etype, end = int(row[1]), row[2], int(row[4])
            if f == file0 and pos < pos0:
                continue
            if etype in HEADER_EVENTS or end <= pos:
                continue
            total += end - pos
    return total


def run_large(env, cfg, res):
    rows = cfg["large_rows"]
    for system, label in LARGE_VARIANTS:
        if system not in cfg["systems"]:
            continue
        why = unavailable(env, system)
        entry = {"system": system, "label": label, "rows": rows}
        if why:
            entry["na"] = why
            res.data["large"].append(entry)
            res.save()
            continue
        srv = Server(env, system, 1, 1, 0, max_binlog_size="1G" if system.startswith("mariadb") else "256M")
        try:
            log(f"large transaction: {label}, UPDATE of {rows} rows in one transaction")
            srv.start()
            prepare(srv, cfg, tables=1, table_size=rows)
            srv.q("FLUSH BINARY LOGS")
            ms = srv.q("SHOW MASTER STATUS")
            file0, pos0 = ms[0][0], int(ms[0][1])
            cli = Cli(srv.port)
            s0 = snapshot(srv)
            cli.run("BEGIN")
            t0 = time.monotonic()
            if cli.run("UPDATE sbtest.sbtest1 SET k=k+1") is None:
                raise RuntimeError(f"UPDATE failed: {cli.p.stderr.read()[-500:] if cli.p.poll() is not None else ''}")
            t1 = time.monotonic()
            if cli.run("COMMIT") is None:
                raise RuntimeError("COMMIT failed")
            t2 = time.monotonic()
            cli.close()
            s1 = snapshot(srv)
            eng, bfiles = log_bytes(srv, s0, s1)
            ev = binlog_event_bytes_since(srv, file0, pos0)
            d = counter_delta(s0["counters"], s1["counters"])
            binlog = ev if ev else (bfiles or None)
            entry.update(update_s=t1 - t0, commit_s=t2 - t1, engine_log_bytes=eng, binlog_file_bytes=bfiles,
                         binlog_event_bytes=ev, syncs=d["syncs"] if d else None,
                         engine_per_binlog=(eng / binlog if eng is not None and binlog else None),
                         all_logs_per_binlog=((eng or 0) + bfiles) / binlog if binlog else None)
            log(f"  update {t1 - t0:.2f}s commit {t2 - t1:.3f}s; binlog events {ev} B, engine log/redo "
                f"{eng} B, binlog files {bfiles} B")
        except (StartError, RuntimeError, subprocess.TimeoutExpired, ValueError, IndexError) as e:
            log(f"large: {label}: {e}")
            entry["na"] = f"failed: {str(e)[:600]}"
        finally:
            srv.remove()
        res.data["large"].append(entry)
        res.save()


# ----------------------------------------------------------------------------- crash recovery

CRASH_VARIANTS = [("onelog-engine", "onelog engine"), ("onelog-file", "onelog file, sync_binlog=1"),
                  ("mariadb-binlog", "MariaDB binlog, sync_binlog=1")]


def run_crash(env, cfg, res):
    for system, label in CRASH_VARIANTS:
        if system not in cfg["systems"]:
            continue
        why = unavailable(env, system)
        entry = {"system": system, "label": label, "load_seconds": cfg["crash_seconds"],
                 "writers": cfg["crash_writers"], "sysbench_threads": cfg["crash_threads"]}
        if why:
            entry["na"] = why
            res.data["crash"].append(entry)
            res.save()
            continue
        srv = Server(env, system, 1, 1, 0, preload=False)
        bg = None
        try:
            log(f"crash recovery: {label}: kill -9 after {cfg['crash_seconds']}s of writes")
            srv.start()
            prepare(srv, cfg)
            srv.q("CREATE DATABASE crash")
            srv.q("CREATE TABLE crash.acks (id BIGINT NOT NULL PRIMARY KEY, w INT NOT NULL, "
                  "pad VARCHAR(100) NOT NULL)")
            stop = threading.Event()
            acked = [[] for _ in range(cfg["crash_writers"])]

            def writer(w):
                cli = Cli(srv.port)
                pad = "x" * 80
                i = 0
                while not stop.is_set():
                    i += 1
                    rid = (w + 1) * 1_000_000_000 + i
                    if cli.run(f"INSERT INTO crash.acks (id, w, pad) VALUES ({rid}, {w}, '{pad}')") is None:
                        break
                    acked[w].append(rid)
                cli.p.kill()
                cli.p.wait()

            bg = sysbench(srv.port, "oltp_write_only", cfg["crash_threads"], cfg["crash_seconds"] + 60,
                          cfg, background=True)
            ths = [threading.Thread(target=writer, args=(w,)) for w in range(cfg["crash_writers"])]
            for t in ths:
                t.start()
            time.sleep(cfg["crash_seconds"])
            srv.kill9()
            stop.set()
            for t in ths:
                t.join(60)
            try:
                os.killpg(bg.pid, signal.SIGKILL)
            except OSError:
                pass
            bg.wait()
            bg = None
            acks = [x for a in acked for x in a]
            ready_s = srv.start()
            present = {int(r[0]) for r in srv.q("SELECT id FROM crash.acks")}
            lost = [x for x in acks if x not in present]
            entry.update(acked=len(acks), present=len(present), lost=len(lost),
                         unacked_present=len(present - set(acks)), restart_to_ready_s=ready_s,
                         log_tail=srv.log_tail(800))
            log(f"  {len(acks)} acknowledged rows, {len(present)} present after restart, {len(lost)} lost; "
                f"ready {ready_s:.2f}s after restart")
        except (StartError, RuntimeError, subprocess.TimeoutExpired, ValueError) as e:
            log(f"crash: {label}: {e}")
            entry["na"] = f"failed: {str(e)[:600]}"
        finally:
            if bg:
                try:
                    os.killpg(bg.pid, signal.SIGKILL)
                except OSError:
                    pass
                bg.wait()
            srv.remove()
        res.data["crash"].append(entry)
        res.save()


# ----------------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(prog="bench/run", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=ENV_HELP)
    ap.add_argument("--quick", action="store_true", help="the quick subset (< 10 minutes on 2 cores)")
    ap.add_argument("--only", help="comma-separated sections: matrix,rotation,large,crash")
    ap.add_argument("--onelog-bin", help="onelog binary (default: $ONELOG_BIN or cargo build --release -p onelog)")
    ap.add_argument("--results", default=None,
                    help="results JSON (default docs/bench/results.json, or results-quick.json with --quick)")
    ap.add_argument("--report-only", action="store_true",
                    help="measure nothing: regenerate docs/BENCHMARKS.md's section and plots from --results")
    ap.add_argument("--no-report", action="store_true", help="do not touch docs/BENCHMARKS.md / docs/bench/*.png")
    ap.add_argument("--docs", default=os.path.join(REPO, "docs"),
                    help="docs directory holding BENCHMARKS.md and bench/ (default: the repository's docs/)")
    ap.add_argument("--replication", action="store_true",
                    help="the replication benchmark (issue 11) instead of the sections above: results in "
                         "docs/bench/replication[-quick].json, its own section of docs/BENCHMARKS.md")
    ap.add_argument("--replica-lag", action="store_true",
                    help="the replica-lag benchmark (issue 12) instead of the sections above: results in "
                         "docs/bench/replica-lag[-quick].json, its own section of docs/BENCHMARKS.md")
    ap.add_argument("--backup", action="store_true",
                    help="the backup/restore benchmark (issue 13) instead of the sections above: onelog backup / "
                         "restore vs mariadb-backup --backup / --prepare; results in docs/bench/backup[-quick].json, "
                         "its own section of docs/BENCHMARKS.md")
    ap.add_argument("--commit", action="store_true",
                    help="the commit benchmark (issue 14) instead of the sections above: the issue's table (onelog D1/D2 "
                         "vs MariaDB D1 at injected fsync latencies), the commit pipeline's phase counters and group "
                         "sizes, and large transactions / bulk load with peak RSS and small-commit latency; results in "
                         "docs/bench/commit[-quick].json, its own section of docs/BENCHMARKS.md")
    ap.add_argument("--queries", action="store_true",
                    help="the join and subquery benchmark (issue 15) instead of the sections above: query shapes on "
                         "100k-row tables, onelog vs MariaDB 10.11; results in docs/bench/queries[-quick].json, its own "
                         "section of docs/BENCHMARKS.md")
    ap.add_argument("--paged", action="store_true",
                    help="the data-larger-than-memory benchmark (issue 17) instead of the sections above: sysbench "
                         "on the paged table store with a bounded cache vs MariaDB 10.11 with the same buffer pool "
                         "(and the in-memory store when the data fits); results in docs/bench/paged[-quick].json, "
                         "its own section of docs/BENCHMARKS.md")
    ap.add_argument("--commit-parts", metavar="PARTS",
                    help="with --commit: comma-separated parts table,pipeline,large (default all; "
                         "env BENCH_COMMIT_PARTS)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary data directories")
    ap.add_argument("--selfcheck-only", action="store_true", help="build and check the preload library, then stop")
    args = ap.parse_args()
    stem = ("paged" if args.paged else "queries" if args.queries else "commit" if args.commit else "backup" if args.backup else "replica-lag" if args.replica_lag else
            "replication" if args.replication else "results")
    results_path = args.results or os.path.join(
        REPO, "docs", "bench", f"{stem}-quick.json" if args.quick else f"{stem}.json")

    sys.dont_write_bytecode = True  # no __pycache__ in the source tree
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import report  # noqa: E402  (bench/lib/report.py)
    sys.modules.setdefault("bench", sys.modules[__name__])  # replication.py imports this module
    import replication  # noqa: E402  (bench/lib/replication.py)
    import replica_lag  # noqa: E402  (bench/lib/replica_lag.py)
    import backup  # noqa: E402  (bench/lib/backup.py)
    import commit  # noqa: E402  (bench/lib/commit.py)
    import queries  # noqa: E402  (bench/lib/queries.py)
    import paged  # noqa: E402  (bench/lib/paged.py)
    write_report = (paged.write_report if args.paged else queries.write_report if args.queries else report.write_commit if args.commit else report.write_backup if args.backup else report.write_replica_lag if args.replica_lag else
                    report.write_replication if args.replication else report.write)

    if args.report_only:
        with open(results_path) as f:
            data = json.load(f)
        write_report(data, REPO, results_path, args.docs)
        return

    tools = ("sysbench", "mariadb", "mariadbd", "mariadb-install-db", "gcc") + (("mariadb-backup",) if args.backup else ())
    for tool in tools:
        if not shutil.which(tool):
            pkgs = {"sysbench": "sysbench", "mariadb": "mariadb-client", "gcc": "gcc",
                    "mariadb-backup": "mariadb-backup"}.get(tool, "mariadb-server")
            if os.geteuid() == 0 and shutil.which("apt-get"):
                log(f"installing {pkgs} (apt-get)")
                subprocess.run(f"DEBIAN_FRONTEND=noninteractive apt-get install -y -qq {pkgs} || "
                               f"(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq {pkgs})",
                               shell=True)
            if not shutil.which(tool):
                sys.exit(f"bench/run: {tool} missing (apt-get install {pkgs})")

    # SIGTERM (and SIGINT even when started in the background) ends the run through the
    # finally below, which kills the server it started.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    signal.signal(signal.SIGINT, signal.default_int_handler)
    cfg = make_config(args)
    if args.replication:
        cfg = replication.make_config(args, cfg)
        cfg["systems"] = cfg["repl_primaries"]  # find_onelog builds onelog only when it is measured
    elif args.commit:
        cfg = commit.make_config(args, cfg)
    elif args.queries:
        cfg = queries.make_config(args, cfg)
        cfg["systems"] = cfg["q_systems"]
    elif args.paged:
        cfg = paged.make_config(args, cfg)
        cfg["systems"] = [paged.PAGED_SYSTEMS[s][0] for s in cfg["p_systems"]]
    elif args.backup:
        cfg = backup.make_config(args, cfg)
        cfg["systems"] = cfg["backup_systems"]
    elif args.replica_lag:
        cfg = replica_lag.make_config(args, cfg)
        cfg["systems"] = list(dict.fromkeys(cfg["lag_primaries"] + (
            ["onelog-engine"] if any(r.startswith("onelog") for r in cfg["lag_replicas"]) else [])))
    env = Env(cfg, args)
    try:
        sc = build_preload(env)
        if args.selfcheck_only:
            return
        machine = describe_machine(env)
        find_onelog(env, args)
        previous = backup.previous_cells(results_path) if args.backup else []
        res = Results(results_path, cfg, machine, sc, env)
        t0 = time.monotonic()
        log(f"mode {cfg['mode']}: sections {','.join(cfg['sections'])}; results -> {results_path}")
        if "replication" in cfg["sections"]:
            replication.run(env, cfg, res)
        if "replica_lag" in cfg["sections"]:
            replica_lag.run(env, cfg, res)
        if "backup" in cfg["sections"]:
            backup.run(env, cfg, res, previous)
        if "commit" in cfg["sections"]:
            commit.run(env, cfg, res)
        if "queries" in cfg["sections"]:
            queries.run(env, cfg, res)
        if "paged" in cfg["sections"]:
            paged.run(env, cfg, res)
        if "matrix" in cfg["sections"]:
            run_matrix(env, cfg, res)
        if "rotation" in cfg["sections"]:
            run_rotation(env, cfg, res)
        if "large" in cfg["sections"]:
            run_large(env, cfg, res)
        if "crash" in cfg["sections"]:
            run_crash(env, cfg, res)
        res.data["elapsed_s"] = round(time.monotonic() - t0)
        res.data["loadavg_after"] = open("/proc/loadavg").read().split()[:3]
        res.save()
        log(f"measured in {res.data['elapsed_s']}s")
        if not args.no_report:
            write_report(res.data, REPO, results_path, args.docs)
        if args.replication:
            print(report.replication_tables(res.data))
        if args.replica_lag:
            print(report.replica_lag_tables(res.data))
        if args.backup:
            print(report.backup_tables(res.data))
        if args.commit:
            print(report.commit_tables(res.data))
        if args.queries:
            print(queries.tables(res.data))
        if args.paged:
            print(paged.tables(res.data))
    finally:
        env.cleanup()


ENV_HELP = """
Environment (defaults: full / --quick):
  BENCH_SECONDS (30/3)        seconds per measured cell
  BENCH_CELL_WARMUP (5/0)     warm-up seconds before each cell (same workload, not measured)
  BENCH_WARMUP (10/2)         warm-up seconds per profile (oltp_read_write, 8 threads)
  BENCH_TABLES (8/2), BENCH_TABLE_SIZE (100000/5000)
  BENCH_THREADS ("1 8 32 64" / "1 8 32")
  BENCH_WORKLOADS ("oltp_write_only oltp_insert oltp_update_non_index oltp_read_write" /
                   "oltp_write_only oltp_insert")
  BENCH_DURABILITY ("D1 D2 D3" / "D1")
  BENCH_LATENCIES_US ("0 1000"), BENCH_EXTRA_LATENCY_US (e.g. "5000": adds the 5 ms column)
  BENCH_SYSTEMS ("onelog-engine onelog-file onelog-mirror mariadb-binlog mariadb-nobinlog")
  BENCH_MAX_BINLOG_SIZE (256M/64M)  onelog segment size / MariaDB max_binlog_size in the matrix
  BENCH_ROT_SECONDS (60/8), BENCH_ROT_SIZE (8M/1M), BENCH_ROT_THREADS (8), BENCH_ROT_LATENCY_US (0)
  BENCH_LARGE_ROWS (100000)   rows updated by the one large transaction
  BENCH_CRASH_SECONDS (20/4), BENCH_CRASH_WRITERS (4), BENCH_CRASH_THREADS (8)
  BENCH_SEED (1)              sysbench --rand-seed
  BENCH_RUNS (1)              repeat the whole matrix; tables show per-cell medians
  BENCH_PORT_BASE (27400), BENCH_WORKDIR (temp dir parent), ONELOG_BIN, BENCH_PYTHON
With --replication (bench/lib/replication.py; BENCH_TABLES, BENCH_TABLE_SIZE, BENCH_WARMUP,
BENCH_CELL_WARMUP and BENCH_SEED as above):
  BENCH_REPL_SECONDS (60/15)  seconds per measured cell
  BENCH_REPL_THREADS ("8 32"), BENCH_REPL_REPLICAS ("0 1 4": asynchronous replicas)
  BENCH_REPL_SEMISYNC ("AFTER_SYNC AFTER_COMMIT": one semi-sync replica per wait point)
  BENCH_REPL_LATENCY_US (1000) injected fsync latency, primary only
  BENCH_REPL_PARALLEL_THREADS (4) the replicas' slave_parallel_threads (optimistic mode)
  BENCH_REPL_PRIMARIES ("onelog-engine mariadb-binlog")
  BENCH_REPL_PROBE_MS (50)    commit-to-replica probe: one insert on the primary per interval
  BENCH_REPL_CATCHUP_S (300)  how long a replica may take to catch up before the cell is void
  BENCH_REPL_PRIMARY_CPUS, BENCH_REPL_REPLICA_CPUS (unset)  taskset -c lists pinning the primary and
                              the replicas (e.g. "0-7" and "8-15": replicas off the primary's cores)
With --replica-lag (bench/lib/replica_lag.py; BENCH_TABLES, BENCH_TABLE_SIZE, BENCH_SEED,
BENCH_REPL_CATCHUP_S (the bound for catching up with prepare) and BENCH_REPL_*_CPUS as above):
  BENCH_LAG_SECONDS (180/30)  seconds of sysbench oltp_write_only load on the primary
  BENCH_LAG_THREADS (16)      sysbench threads
  BENCH_LAG_LATENCY_US (1000) injected fsync latency, primary only
  BENCH_LAG_REPLICA_LATENCY_US (0) the replicas' own injected fsync latency (0: none, their disk's own)
  BENCH_LAG_SAMPLE_S (10)     a Seconds_Behind_Master / GTID distance sample every N seconds
  BENCH_LAG_POLL_S (0.5)      the GTID trace (apply rate, catch-up time) every N seconds
  BENCH_LAG_IDLE_FACTOR (5)   after the load, wait at most N x the load time for the catch-up
  BENCH_LAG_BASELINE (1)      also load each primary alone first (its full speed); 0: skip
  BENCH_LAG_BACKLOG (0)       1: stop the replica during the load and start it after: its apply
                              speed from a backlog (docs/BENCHMARKS.md, apply speed from a backlog)
  BENCH_LAG_PRIMARIES ("onelog-engine mariadb-binlog")
  BENCH_LAG_REPLICAS ("onelog:0 onelog:4 onelog:16 mariadb:0 mariadb:4" /
                      "onelog:0 onelog:4 mariadb:0 mariadb:4")  replica kind:parallel threads
With --backup (bench/lib/backup.py; BENCH_SEED as above):
  BENCH_BACKUP_TABLES (4), BENCH_BACKUP_TABLE_SIZE (1000000/100000)
  BENCH_BACKUP_THREADS (8)    sysbench oltp_write_only threads, with and without the backup
  BENCH_BACKUP_SECONDS (90/30) seconds of each load
  BENCH_BACKUP_WARMUP (15/5)  warm-up seconds after prepare (not measured)
  BENCH_BACKUP_DELAY_S (10/5) the backup starts this many seconds into the second load
  BENCH_BACKUP_TIMEOUT_S (1800) bound on each backup, restore, prepare and copy-back
  BENCH_BACKUP_SYSTEMS ("onelog-engine mariadb-binlog")
  BENCH_BACKUP_MERGE (0)      1: keep the earlier results' cells of servers not measured in this run
With --commit (bench/lib/commit.py; BENCH_SEED as above; servers on the real disk plus the injected latency):
  BENCH_COMMIT_PARTS ("table pipeline large")  or --commit-parts: which parts run
    table: sysbench oltp_write_only, onelog D1, onelog D2, MariaDB D1 (binlog, ROW, sync_binlog=1)
    pipeline: the onelog cells' Onelog_commit_* / Onelog_log_fsync* / group-size deltas (phase and
              group-size tables; runs the onelog profiles alone when "table" is left out)
    large: sysbench prepare time, big UPDATE / INSERT ... SELECT commit time, peak RSS, small-commit
           p99/max while they commit vs alone (onelog D1 and MariaDB D1, no injected latency)
  BENCH_COMMIT_SECONDS (15/5)  seconds per measured cell of the table
  BENCH_COMMIT_WARMUP (5/2)    oltp_write_only warm-up seconds (8 threads) per server profile
  BENCH_COMMIT_LATENCIES_US ("1000 3000"), BENCH_COMMIT_THREADS ("1 8 32")
  BENCH_COMMIT_TABLE_SIZE (100000)  rows of the table's one sysbench table
  BENCH_COMMIT_RUNS (1)        repeat the table (all latencies and profiles) N times: per-cell medians
  BENCH_COMMIT_TABLE_DIR (unset: the work dir)  where the table's servers keep their data; a tmpfs
                              leaves the injected latency as all a sync costs (mount one: not
                              /dev/shm, where MariaDB mmaps its redo log and never syncs it)
  BENCH_COMMIT_LOAD_TABLES (4), BENCH_COMMIT_LOAD_ROWS (250000/100000)  the timed sysbench prepare;
                              the small-commit client then updates these tables
  BENCH_COMMIT_BIG_ROWS (1000000/500000)  rows of big.sbtest1 (UPDATE / INSERT ... SELECT of all)
  BENCH_COMMIT_PART_ROWS (100000/50000)   rows of the partial UPDATE / INSERT ... SELECT
  BENCH_COMMIT_SMALL_SECONDS (10/5)       the small-commit client alone (its baseline p99)
  BENCH_COMMIT_MEM_LIMIT (6G)  resident memory bound per server: VmRSS sampled every 50 ms, the server is
                              killed and reported past it (a memory cgroup at 2x, page cache included,
                              backs it up where one can be made)
  BENCH_COMMIT_STMT_TIMEOUT_S (900)  a big statement not committed by then: the server is killed
  BENCH_COMMIT_LARGE_SYSTEMS ("onelog-engine mariadb-binlog")
"""

if __name__ == "__main__":
    main()
