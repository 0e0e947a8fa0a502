"""bench/lib/commit.py — `bench/run --commit [--quick]` (issue 14's measurements). Not a test.

Owns the commit benchmark, in three parts (BENCH_COMMIT_PARTS or --commit-parts; default all):

- **table** (issue 14 part 2's goals): sysbench oltp_write_only, 1 table × commit_table_size rows,
  commit_seconds per cell, injected fsync latency commit_latencies_us (the fsync_delay preload,
  the same for every server), threads commit_threads; systems onelog D1, onelog D2
  (innodb_flush_log_at_trx_commit=1/2) and MariaDB 10.11 D1 (file binlog, ROW, sync_binlog=1,
  innodb_flush_log_at_trx_commit=1). Per cell: TPS, p99, fsyncs per transaction (onelog: the
  `Onelog_log_fsyncs` delta; MariaDB: the preload's count; both kept).
- **pipeline** (part 1's histogram): for every onelog cell the deltas of the SHOW GLOBAL STATUS
  commit-path counters (`Onelog_commit_*`, `Onelog_log_fsync*`, `Binlog_commits`,
  `Binlog_group_commits`) over the measured run; report.commit_pipeline turns them into the
  phase and group-size tables (bench/commit_profile.sh's arithmetic). Without "table" only the
  onelog profiles run.
- **large** (parts 3 and 4): onelog D1 and MariaDB D1, one at a time, no injected latency, each
  server bounded to commit_mem_limit of resident memory (RssWatch kills it past that; a memory
  cgroup at CGROUP_FACTOR × the bound, page cache included, is the backstop): the time of
  `sysbench prepare` of commit_load_tables × commit_load_rows rows; then a commit_big_rows-row
  table `big.sbtest1` (sysbench schema) and, one after the other, UPDATE … SET k=k+1 over commit_part_rows rows and over all rows, INSERT INTO big.copy SELECT … of
  commit_part_rows rows and of all rows (copy: the same schema, emptied before each), each
  BEGIN; statement; COMMIT through one client: statement and COMMIT wall time, the server's
  peak RSS during it (VmHWM after a clear_refs reset, and VmRSS sampled every 50 ms), and the
  latency (p99, max) of single-row autocommit UPDATEs issued meanwhile by one sysbench thread
  (bench/lib/small_commits.lua, oltp_update_index with start/stop files) on the prepared
  `sbtest` tables, against the same client's latency with no big statement (baseline).

Reuses bench.py's servers, preload, sysbench driver/parser and results store; called by
bench.py's main; report.write_commit / report.commit_tables write the docs and the stdout tables.

Invariants:
- one server runs at a time, each on a fresh data directory, stopped before the next starts;
- per-cell counters are deltas taken immediately before and after the measured sysbench run;
  warm-ups run outside the window;
- every wait is bounded: sysbench by --time (the small-commit client also by its stop file),
  each big statement by commit_stmt_timeout_s (the server is killed past it), the memory by the
  cgroup; a server that dies or fails is recorded as n/a with the reason and the run goes on.
"""

import os
import re
import shutil
import subprocess
import tempfile
import threading
import time

import bench as B

# (system, durability) of the table part, in column order.
TABLE_PROFILES = [("onelog-engine", "D1"), ("onelog-engine", "D2"), ("mariadb-binlog", "D1")]
LARGE_LABEL = {"onelog-engine": "onelog", "mariadb-binlog": "MariaDB 10.11"}
PARTS = ["table", "pipeline", "large"]
CGROUP_FACTOR = 2  # the cgroup backstop's limit over the RSS bound (v1 and v2 count page cache)
SMALL_LUA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "small_commits.lua")
# The sysbench table schema (oltp_common.lua) with its secondary index, for big.copy.
COPY_DDL = ("CREATE TABLE big.copy (id INTEGER NOT NULL AUTO_INCREMENT, k INTEGER DEFAULT '0' NOT NULL, "
            "c CHAR(120) DEFAULT '' NOT NULL, pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id), KEY k_1 (k))")
# Status counters kept per statement of the large part (those a server does not have are left out).
LARGE_STATUS = ["Binlog_bytes_written", "Binlog_cache_use", "Binlog_cache_disk_use", "Onelog_log_fsyncs",
                "Onelog_commit_apply_us", "Onelog_commit_write_us", "Onelog_commit_encode_us",
                "Onelog_commit_sync_us", "Onelog_log_rotation_wait_us"]


def parse_size(text):
    m = re.fullmatch(r"\s*(\d+)\s*([KMGT]?)i?B?\s*", text, re.I)
    if not m:
        raise SystemExit(f"bench/run: bad size {text!r} (e.g. 6G)")
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30, "T": 40}[m.group(2).upper()]


def make_config(args, cfg):
    q = args.quick
    parts = (getattr(args, "commit_parts", None) or os.environ.get("BENCH_COMMIT_PARTS") or ",".join(PARTS))
    parts = [p for p in re.split(r"[,\s]+", parts) if p]
    bad = [p for p in parts if p not in PARTS]
    if bad:
        raise SystemExit(f"bench/run: unknown --commit part(s) {bad}; parts: {','.join(PARTS)}")
    cfg.update({
        "commit_parts": parts,
        "commit_seconds": B.env_int("BENCH_COMMIT_SECONDS", 5 if q else 15),
        "commit_warmup": B.env_int("BENCH_COMMIT_WARMUP", 2 if q else 5),
        "commit_latencies_us": [int(x) for x in B.env_list("BENCH_COMMIT_LATENCIES_US", ["1000", "3000"])],
        "commit_threads": [int(x) for x in B.env_list("BENCH_COMMIT_THREADS", ["1", "8", "32"])],
        "commit_table_size": B.env_int("BENCH_COMMIT_TABLE_SIZE", 100000),
        "commit_runs": B.env_int("BENCH_COMMIT_RUNS", 1),
        "commit_table_dir": os.environ.get("BENCH_COMMIT_TABLE_DIR") or None,
        "commit_load_tables": B.env_int("BENCH_COMMIT_LOAD_TABLES", 4),
        "commit_load_rows": B.env_int("BENCH_COMMIT_LOAD_ROWS", 100000 if q else 250000),
        "commit_big_rows": B.env_int("BENCH_COMMIT_BIG_ROWS", 500000 if q else 1000000),
        "commit_part_rows": B.env_int("BENCH_COMMIT_PART_ROWS", 50000 if q else 100000),
        "commit_small_seconds": B.env_int("BENCH_COMMIT_SMALL_SECONDS", 5 if q else 10),
        "commit_mem_limit": parse_size(os.environ.get("BENCH_COMMIT_MEM_LIMIT", "6G")),
        "commit_stmt_timeout_s": B.env_int("BENCH_COMMIT_STMT_TIMEOUT_S", 900),
        "commit_large_systems": B.env_list("BENCH_COMMIT_LARGE_SYSTEMS", list(LARGE_LABEL)),
        "sections": ["commit"],
    })
    systems = []
    if "table" in parts or "pipeline" in parts:
        systems += ["onelog-engine"] + (["mariadb-binlog"] if "table" in parts else [])
    if "large" in parts:
        systems += cfg["commit_large_systems"]
    cfg["systems"] = list(dict.fromkeys(systems))
    return cfg


def why_not(env, system):
    if system.startswith("onelog") and not env.onelog:
        return "no onelog binary"
    return B.unavailable(env, system)


# ----------------------------------------------------------------------------- part 1 and 2: the table

def phase_deltas(s0, s1):
    """Deltas of the commit-path counters between two snapshots (bench.snapshot)."""
    out = {}
    for k in s1["status"]:
        if k.startswith(("Onelog_commit_", "Onelog_log_fsync")) or k in ("Binlog_commits", "Binlog_group_commits"):
            v = B.status_delta(s0["status"], s1["status"], k)
            if v is not None:
                out[k] = v
    return out


def measure(srv, cfg, threads):
    """One measured sysbench oltp_write_only run; the cell without its keys."""
    tbl = {"tables": 1, "table_size": cfg["commit_table_size"]}
    s0 = B.snapshot(srv)
    out = B.sysbench(srv.port, "oltp_write_only", threads, cfg["commit_seconds"], cfg, **tbl)
    s1 = B.snapshot(srv)
    cell = B.measure_cell(srv, s0, s1, out)
    cell["wall_s"] = s1["t"] - s0["t"]
    cell["phase_deltas"] = phase_deltas(s0, s1)
    lf = cell["phase_deltas"].get("Onelog_log_fsyncs")
    cell["log_fsyncs_per_txn"] = lf / cell["txns"] if lf is not None and cell.get("txns") else None
    return cell


def run_profile(env, cfg, res, system, dur, lat, run=1):
    key = f"{system}/{dur}/{lat}"
    why = why_not(env, system)
    if why:
        res.data["commit_na"][key] = why
        res.save()
        return
    flush, syncb = B.DURABILITY[dur]
    srv = B.Server(env, system, flush, syncb, lat, max_binlog_size="256M")
    tbl = {"tables": 1, "table_size": cfg["commit_table_size"]}
    try:
        B.log(f"commit table{f' run {run}' if cfg['commit_runs'] > 1 else ''}: {system} {dur} latency={lat}us: "
              f"start, prepare 1 x {cfg['commit_table_size']}, "
              f"warm-up {cfg['commit_warmup']}s")
        srv.start()
        res.data["commit_profiles"][key] = B.server_vars(srv)
        B.prepare(srv, cfg, **tbl)
        if cfg["commit_warmup"]:
            B.sysbench(srv.port, "oltp_write_only", 8, cfg["commit_warmup"], cfg, **tbl)
        for t in cfg["commit_threads"]:
            cell = measure(srv, cfg, t)
            cell.update(system=system, durability=dur, latency_us=lat, threads=t, run=run)
            res.data["commit_table"].append(cell)
            res.save()
            pd = cell["phase_deltas"]
            B.log(f"  threads={t}: {cell.get('tps')} tps p99 {cell.get('p99')} ms; syncs/txn preload "
                  f"{B.fmt(cell.get('fsyncs_per_txn'), 3)}, log {B.fmt(cell.get('log_fsyncs_per_txn'), 3)}; "
                  f"commits/group {B.fmt(ratio(pd.get('Binlog_commits'), pd.get('Binlog_group_commits')), 1)}")
    except (B.StartError, RuntimeError, subprocess.TimeoutExpired) as e:
        B.log(f"commit table: {key}: {e}")
        res.data["commit_na"][key] = f"failed: {str(e)[:600]}"
        res.save()
    finally:
        srv.remove()


def ratio(a, b):
    return a / b if a is not None and b else None


def run_table(env, cfg, res):
    """Every profile of the table, one server at a time; with commit_table_dir (e.g. a tmpfs) their
    data directories go there, so the injected latency is all a sync costs, the same for both."""
    profiles = TABLE_PROFILES if "table" in cfg["commit_parts"] else [p for p in TABLE_PROFILES
                                                                    if p[0].startswith("onelog")]
    work = env.work
    if cfg["commit_table_dir"]:
        env.work = tempfile.mkdtemp(prefix="onelog-bench-table.", dir=cfg["commit_table_dir"])
        res.data["commit_table_fs"] = B.sh(f"df --output=fstype {env.work} | tail -1")
    try:
        for run in range(1, cfg["commit_runs"] + 1):
            for lat in cfg["commit_latencies_us"]:
                for system, dur in profiles:
                    run_profile(env, cfg, res, system, dur, lat, run)
    finally:
        if env.work != work:
            if not env.keep:
                shutil.rmtree(env.work, ignore_errors=True)
            env.work = work


# ----------------------------------------------------------------------------- part 3: memory bound

class MemLimit:
    """A memory cgroup (v2 memory.max or v1 memory.limit_in_bytes) below this process's own, made
    per server: the backstop behind RssWatch (it counts page cache too, so it gets CGROUP_FACTOR ×
    the bound); where none can be made, RssWatch alone bounds the server."""

    def __init__(self, name, limit):
        self.limit = limit
        self.dir = None
        self.how = None
        for base, knob in self.candidates():
            d = os.path.join(base, name)
            try:
                os.makedirs(d, exist_ok=True)
                with open(os.path.join(d, knob), "w") as fh:
                    fh.write(str(limit))
                self.dir, self.how = d, f"cgroup {knob}"
                return
            except OSError:
                self.rmdir(d)

    @staticmethod
    def candidates():
        out = []
        try:
            lines = open("/proc/self/cgroup").read().splitlines()
        except OSError:
            return out
        for line in lines:
            _, ctrls, path = line.split(":", 2)
            if "memory" in ctrls.split(","):
                out.append((os.path.join("/sys/fs/cgroup/memory", path.lstrip("/")), "memory.limit_in_bytes"))
            elif ctrls == "":
                out.append((os.path.join("/sys/fs/cgroup", path.lstrip("/")), "memory.max"))
        return out

    def wrap(self):
        if self.dir:
            procs = os.path.join(self.dir, "cgroup.procs")
            return ["sh", "-c", 'echo $$ > "$0" && exec "$@"', procs]
        return []

    def oom_kills(self):
        for f in ("memory.events", "memory.oom_control"):
            try:
                m = re.search(r"oom_kill (\d+)", open(os.path.join(self.dir or "/nonexistent", f)).read())
                if m:
                    return int(m.group(1))
            except OSError:
                pass
        return None

    @staticmethod
    def rmdir(d):
        try:
            os.rmdir(d)
        except OSError:
            pass

    def remove(self):
        if self.dir:
            self.rmdir(self.dir)


class RssWatch:
    """The server's resident memory for its whole life, sampled every 50 ms: a watchdog that
    kills the server (SIGKILL) once VmRSS exceeds the limit (the cgroup behind it also counts page
    cache, so it is set higher), and the peak of each statement: between begin() and end(), the
    larger of VmHWM after a clear_refs reset and the largest sample."""

    def __init__(self, pid, limit):
        self.pid, self.limit = pid, limit
        self.killed = None  # the VmRSS that made the watchdog kill the server
        self.peak = 0
        self.hwm_reset = False
        self.halt = threading.Event()
        self.th = threading.Thread(target=self.loop, daemon=True)
        self.th.start()

    def read(self, field):
        return B.proc_status_bytes(self.pid, field)

    def loop(self):
        while not self.halt.wait(0.05):
            v = self.read("VmRSS")
            if v is None:
                continue
            self.peak = max(self.peak, v)
            if v > self.limit and self.killed is None:
                self.killed = v
                try:
                    os.kill(self.pid, 9)
                except OSError:
                    pass

    def begin(self):
        try:
            with open(f"/proc/{self.pid}/clear_refs", "w") as fh:
                fh.write("5")
            self.hwm_reset = True
        except OSError:
            self.hwm_reset = False
        self.before = self.read("VmRSS")
        self.peak = self.before or 0

    def end(self):
        hwm = self.read("VmHWM") if self.hwm_reset else None
        return {"rss_before": self.before, "rss_peak": max(self.peak, hwm or 0) or None,
                "rss_after": self.read("VmRSS"), "hwm_reset": self.hwm_reset}

    def stop(self):
        self.halt.set()
        self.th.join(5)

    def death(self, cfg, mem):
        """Why the server died, as far as the watchdog and the cgroup know."""
        if self.killed:
            return f"killed by the harness: VmRSS {self.killed >> 20} MiB > the {cfg['commit_mem_limit'] >> 20} MiB bound"
        kills = mem.oom_kills()
        return f"{kills} OOM kill(s) in its memory cgroup" if kills else ""


# ----------------------------------------------------------------------------- part 3: small commits

class SmallCommits:
    """One sysbench thread of single-row autocommit UPDATEs (small_commits.lua) on the sbtest
    tables, started now, measuring from go() until stop()."""

    def __init__(self, srv, cfg, tag):
        d = os.path.join(srv.dir, f"small-{tag}")
        os.makedirs(d, exist_ok=True)
        self.ready, self.go_f, self.stop_f = (os.path.join(d, n) for n in ("ready", "go", "stop"))
        e = dict(os.environ, SB_READY_FILE=self.ready, SB_GO_FILE=self.go_f, SB_STOP_FILE=self.stop_f)
        self.bound = cfg["commit_stmt_timeout_s"] + 120
        self.proc = B.sysbench(srv.port, SMALL_LUA, 1, self.bound, cfg, tables=cfg["commit_load_tables"],
                               table_size=cfg["commit_load_rows"], background=True, env=e)
        t0 = time.monotonic()
        while not os.path.exists(self.ready + ".0"):
            if self.proc.poll() is not None or time.monotonic() - t0 > 60:
                out = self.kill()
                raise RuntimeError(f"small-commit client did not start: {out[-800:]}")
            time.sleep(0.02)

    def go(self):
        open(self.go_f, "w").close()
        self.t0 = time.monotonic()

    def stop(self):
        """The client's results: count, rate, p99, max, avg (ms)."""
        open(self.stop_f, "w").close()
        seconds = time.monotonic() - self.t0
        try:
            out, _ = self.proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            self.kill()
            raise RuntimeError("small-commit client did not stop 120 s after its stop file") from None
        if self.proc.returncode != 0:
            raise RuntimeError(f"small-commit client failed: {out[-800:]}")
        r = B.parse_sysbench(out)
        m = re.search(r"max:\s+([\d.]+)", out)
        mx = float(m.group(1)) if m else None
        # sysbench's percentile is its histogram bucket's bound, which can exceed the max seen
        p99 = min(r["p99"], mx) if r.get("p99") is not None and mx is not None else r.get("p99")
        return {"commits": r.get("txns"), "seconds": seconds, "per_s": (r.get("txns") or 0) / seconds if seconds else None,
                "p99_ms": p99, "sysbench_p99_ms": r.get("p99"), "max_ms": mx, "avg_ms": r.get("avg_ms"),
                "p50_ms": r.get("p50"), "errors": r.get("errors")}

    def kill(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, 9)
            except OSError:
                pass
        out, _ = self.proc.communicate()
        return out or ""


def baseline(srv, cfg):
    sc = SmallCommits(srv, cfg, "baseline")
    sc.go()
    time.sleep(cfg["commit_small_seconds"])
    return sc.stop()


# ----------------------------------------------------------------------------- part 3: big statements

def statements(cfg):
    part, big = cfg["commit_part_rows"], cfg["commit_big_rows"]
    return [
        ("update", part, f"UPDATE big.sbtest1 SET k=k+1 WHERE id <= {part}"),
        ("update", big, "UPDATE big.sbtest1 SET k=k+1"),
        ("insert_select", part, f"INSERT INTO big.copy SELECT * FROM big.sbtest1 WHERE id <= {part}"),
        ("insert_select", big, "INSERT INTO big.copy SELECT * FROM big.sbtest1"),
    ]


def big_txn(srv, sql, timeout):
    """BEGIN; sql; COMMIT through one client, bounded by timeout (the server is killed past it).
    Returns (statement s, commit s, ROW_COUNT())."""
    cli = B.Cli(srv.port)
    out = {}

    def go():
        if cli.run("BEGIN") is None:
            return
        t0 = time.monotonic()
        rc = cli.run(f"{sql};\nSELECT ROW_COUNT()")  # right after the statement: its own count
        if rc is None:
            return
        out["stmt_s"] = time.monotonic() - t0
        out["row_count"] = int(rc[-1]) if rc and rc[-1].lstrip("-").isdigit() else None
        t1 = time.monotonic()
        if cli.run("COMMIT") is None:
            return
        out["commit_s"] = time.monotonic() - t1

    th = threading.Thread(target=go, daemon=True)
    th.start()
    th.join(timeout)
    if th.is_alive():
        srv.kill9()
        cli.p.kill()
        th.join(30)
        raise RuntimeError(f"not done after {timeout} s: the server was killed")
    err = ""
    if "commit_s" not in out:
        cli.p.kill()
        err = cli.p.stderr.read()[-2000:] if cli.p.stderr else ""
        err = next((ln for ln in reversed(err.splitlines()) if ln.startswith("ERROR")), err[-600:])
    cli.close()
    if "commit_s" not in out:
        raise RuntimeError(f"failed: {err.strip() or 'the client lost its connection'}")
    return out["stmt_s"], out["commit_s"], out.get("row_count")


def status_of(srv):
    st = srv.status()
    return {k: B.num(st, k) for k in LARGE_STATUS if k in st}


def run_statement(srv, cfg, kind, rows, sql, mem, watch):
    """One big statement with the small-commit client running; the statement's entry."""
    st = {"kind": kind, "rows": rows, "sql": sql}
    if kind == "insert_select":
        srv.q("TRUNCATE TABLE big.copy")
    sc = SmallCommits(srv, cfg, f"{kind}-{rows}")
    watch.begin()
    s0 = status_of(srv)
    try:
        sc.go()
        st["stmt_s"], st["commit_s"], st["row_count"] = big_txn(srv, sql, cfg["commit_stmt_timeout_s"])
        st["total_s"] = st["stmt_s"] + st["commit_s"]
        st["small"] = sc.stop()
    except RuntimeError as e:
        sc.kill()
        died = srv.proc is None
        if not died:
            try:
                srv.proc.wait(3)  # a killed server's socket closes before it can be reaped
                died = True
            except subprocess.TimeoutExpired:
                pass
        why = str(e)
        if died:
            code = None if srv.proc is None else srv.proc.returncode
            cause = watch.death(cfg, mem)
            why = f"the server died (exit {code}" + (f", {cause}" if cause else "") + f"): {why}"
        st["na"] = why[:600]
        st["server_died"] = died
        return st
    finally:
        st.update(watch.end())
    time.sleep(1)
    st["rss_settled"] = watch.read("VmRSS")
    s1 = status_of(srv)
    st["status_deltas"] = {k: s1[k] - s0[k] for k in s1 if k in s0 and s1[k] is not None and s0[k] is not None}
    if st.get("row_count") is not None and st["row_count"] != rows:
        st["row_count_note"] = f"ROW_COUNT() {st['row_count']} ≠ {rows}"
    return st


def load_data(srv, cfg, entry):
    """sysbench prepare of the small-commit tables (timed: the bulk-load number) and of big.sbtest1."""
    t0 = time.monotonic()
    B.prepare(srv, cfg, tables=cfg["commit_load_tables"], table_size=cfg["commit_load_rows"])
    entry["load_prepare_s"] = time.monotonic() - t0
    t0 = time.monotonic()
    B.prepare(srv, cfg, tables=1, table_size=cfg["commit_big_rows"], db="big")
    entry["big_prepare_s"] = time.monotonic() - t0
    srv.q(COPY_DDL)
    B.log(f"  prepare {cfg['commit_load_tables']} x {cfg['commit_load_rows']}: {entry['load_prepare_s']:.1f}s; "
          f"1 x {cfg['commit_big_rows']}: {entry['big_prepare_s']:.1f}s")


def restart(srv, cfg, entry):
    """After a statement killed the server: start it again on the same data (its recovery), so the
    next statements still run; None when it does not come up."""
    if srv.proc is not None:
        srv.proc.wait()
        srv.proc = None
    try:
        t = srv.start()
    except B.StartError as e:
        entry.setdefault("restarts", []).append({"failed": str(e)[:600]})
        return None
    entry.setdefault("restarts", []).append({"ready_s": t})
    B.log(f"  restarted after the server died: ready in {t:.1f}s")
    return RssWatch(srv.proc.pid, cfg["commit_mem_limit"])


def run_large_server(env, cfg, system):
    entry = {"system": system, "label": LARGE_LABEL.get(system, system), "statements": []}
    why = why_not(env, system)
    if why:
        entry["na"] = why
        return entry
    srv = B.Server(env, system, 1, 1, 0, max_binlog_size="1G")
    mem = MemLimit(f"onelog-bench-{os.getpid()}-{system}", CGROUP_FACTOR * cfg["commit_mem_limit"])
    srv.wrap = mem.wrap()
    entry["mem_limit"] = {"bytes": cfg["commit_mem_limit"], "how": "VmRSS watchdog" + (
        f" + {mem.how} at {CGROUP_FACTOR}× (page cache included)" if mem.how else "")}
    watch = None
    try:
        B.log(f"commit large: {entry['label']}: start (memory bound {cfg['commit_mem_limit'] >> 20} MiB: "
              f"{entry['mem_limit']['how']}), prepare")
        srv.start()
        watch = RssWatch(srv.proc.pid, cfg["commit_mem_limit"])
        load_data(srv, cfg, entry)
        entry["baseline"] = baseline(srv, cfg)
        B.log(f"  small commits alone: p99 {entry['baseline']['p99_ms']} ms, max {entry['baseline']['max_ms']} ms")
        for kind, rows, sql in statements(cfg):
            if srv.proc is None or srv.proc.poll() is not None:
                watch.stop()
                watch = restart(srv, cfg, entry)
                if watch is None:
                    entry["statements"].append({"kind": kind, "rows": rows, "sql": sql,
                                                "na": "not run: the server died and did not restart"})
                    continue
            st = run_statement(srv, cfg, kind, rows, sql, mem, watch)
            entry["statements"].append(st)
            B.log(f"  {sql}: " + (st["na"] if st.get("na") else
                                  f"{st['stmt_s']:.2f}s + commit {st['commit_s']:.3f}s; peak RSS "
                                  f"{(st['rss_peak'] or 0) >> 20} MiB; small p99 {st['small']['p99_ms']} ms "
                                  f"max {st['small']['max_ms']} ms"))
    except (B.StartError, RuntimeError, subprocess.TimeoutExpired, ValueError, IndexError) as e:
        cause = watch.death(cfg, mem) if watch else ""
        B.log(f"commit large: {entry['label']}: {cause} {e}")
        entry["na"] = f"failed: {cause + '; ' if cause else ''}{str(e)[:900]}"
    finally:
        if watch:
            watch.stop()
        srv.remove()
        mem.remove()
    return entry


def run(env, cfg, res):
    res.data.update(commit_table=[], commit_na={}, commit_profiles={}, commit_large=[])
    if "table" in cfg["commit_parts"] or "pipeline" in cfg["commit_parts"]:
        run_table(env, cfg, res)
    if "large" in cfg["commit_parts"]:
        for system in cfg["commit_large_systems"]:
            res.data["commit_large"].append(run_large_server(env, cfg, system))
            res.save()
