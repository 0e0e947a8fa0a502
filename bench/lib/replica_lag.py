"""bench/lib/replica_lag.py — `bench/run --replica-lag [--quick]` (issue 12 part 7). Not a test.

Owns: the replica-lag benchmark (the seed's method, seed 001 "Replica lag under load"). For each
primary (onelog in engine mode at D1; MariaDB 10.11 with log_bin, ROW, sync_binlog=1,
innodb_flush_log_at_trx_commit=1) and each replica configuration (onelog with 0, 4 and 16
parallel threads; MariaDB 10.11 with 0 and 4, optimistic), one cell on fresh servers: the
replica is attached, `sysbench prepare` runs on the primary and is replicated, then sysbench
oltp_write_only (16 threads) loads the primary for the load time with injected fsync latency
(the primary only), then the primary is idle until the replica has caught up (bounded by
`lag_idle_factor` × the load time). Every `lag_sample_s` seconds (and at the end of the load, and
when the replica caught up) a sample records the replica's Seconds_Behind_Master and the GTID
distance (the primary's domain-0 seq_no in @@gtid_binlog_pos minus the replica's in
@@gtid_slave_pos); a finer trace (every `lag_poll_s`) of the two seq_nos gives the replica's apply
rate while behind and the time to catch up. At the end the replica's sysbench tables must hash
equal to the primary's (every row, ordered by id); otherwise the cell is void.

Reuses replication.py (primary startup with the `repl` user, MariaDB replicas, CHANGE MASTER,
SHOW SLAVE STATUS) and bench.py (servers, fsync-delay library, sysbench, results store); called
by bench.py's main; report.write_replica_lag writes the docs.

Invariants:
- one primary and one replica run at a time (on a machine with few CPUs anything else would
  measure the machine), both on fresh data directories, both stopped before the next cell;
- every loop is bounded: the load by sysbench's --time (killed 120 s after it), the idle phase by
  lag_idle_factor × load seconds, every query by a timeout;
- a cell whose replica stopped or holds other rows than the primary is kept with `void` set; one
  that did not catch up within the bound has `not_caught_up` set (its lag and apply rate stand,
  its rows are not compared); a cell whose servers could not be set up (a replica that does not know
  CHANGE MASTER yet, a start failure) is n/a with the server's own error text; the run goes on.
"""

import hashlib
import os
import signal
import subprocess
import time

import bench as B
import replication as R

LAG_PRIMARIES = {"onelog-engine": "onelog", "mariadb-binlog": "MariaDB 10.11"}
# replica configuration "kind:threads" -> label
LAG_REPLICAS_FULL = ["onelog:0", "onelog:4", "onelog:16", "mariadb:0", "mariadb:4"]
LAG_REPLICAS_QUICK = ["onelog:0", "onelog:4", "mariadb:0", "mariadb:4"]


def make_config(args, cfg):
    q = args.quick
    cfg = R.make_config(args, cfg)  # the shared replication settings (CPU pinning, catch-up bound)
    cfg.update({
        "lag_seconds": B.env_int("BENCH_LAG_SECONDS", 30 if q else 180),
        "lag_threads": B.env_int("BENCH_LAG_THREADS", 16),
        "lag_latency_us": B.env_int("BENCH_LAG_LATENCY_US", 1000),
        # the replicas' own injected fsync latency (0: none, the disk's own)
        "lag_replica_latency_us": B.env_int("BENCH_LAG_REPLICA_LATENCY_US", 0),
        "lag_sample_s": B.env_int("BENCH_LAG_SAMPLE_S", 10),
        "lag_poll_s": float(os.environ.get("BENCH_LAG_POLL_S") or 0.5),
        "lag_idle_factor": B.env_int("BENCH_LAG_IDLE_FACTOR", 5),
        "lag_baseline": B.env_int("BENCH_LAG_BASELINE", 1),
        # backlog mode: the replica is stopped (STOP SLAVE) during the load and started when it
        # ends, so "apply rate while behind" is its apply speed from a backlog with the primary
        # idle: the speed to compare between replicas that all keep up with a loaded primary
        "lag_backlog": B.env_int("BENCH_LAG_BACKLOG", 0),
        "lag_primaries": B.env_list("BENCH_LAG_PRIMARIES", list(LAG_PRIMARIES)),
        "lag_replicas": B.env_list("BENCH_LAG_REPLICAS", LAG_REPLICAS_QUICK if q else LAG_REPLICAS_FULL),
        "sections": ["replica_lag"],
    })
    for r in cfg["lag_replicas"]:
        kind, _, n = r.partition(":")
        if kind not in ("onelog", "mariadb") or not n.isdigit():
            raise SystemExit(f"bench/run: BENCH_LAG_REPLICAS entry {r!r} is not onelog:N or mariadb:N")
    return cfg


def replica_label(r):
    kind, _, n = r.partition(":")
    name = "onelog" if kind == "onelog" else "MariaDB 10.11"
    return f"{name}, {n} parallel thread{'s' if n != '1' else ''}" + (" (optimistic)" if n != "0" else "")


# ----------------------------------------------------------------------------- servers

def start_onelog_replica(env, cfg, primary, parallel):
    """An onelog replica (server id 2, real disk, the preload only with a replica latency) of
    `primary` configured as a MariaDB one is: CHANGE MASTER, slave_parallel_threads/mode, START
    SLAVE."""
    lat = cfg["lag_replica_latency_us"]
    srv = B.Server(env, "onelog-engine", 1, 1, lat, preload=lat > 0, extra=["--server-id=2"])
    R.pin(srv, cfg["repl_replica_cpus"])
    srv.start()
    for sql in (R.change_master_sql(primary), f"SET GLOBAL slave_parallel_threads={parallel}",
                "SET GLOBAL slave_parallel_mode='optimistic'", "START SLAVE"):
        try:
            srv.q(sql)
        except RuntimeError as e:
            if sql.startswith("CHANGE MASTER") and "ERROR 1064" in str(e):
                raise RuntimeError("this onelog binary has no replica side yet (CHANGE MASTER TO is a syntax "
                                   "error: 1064 (42000))") from None
            raise RuntimeError(f"the onelog replica refused {sql.split(' MASTER_HOST')[0]}: {R.server_error(e)}") from None
    return srv


def start_replica(env, cfg, primary, spec):
    kind, _, n = spec.partition(":")
    if kind == "onelog":
        return start_onelog_replica(env, cfg, primary, int(n))
    return R.start_replica(env, cfg, 1, primary, False, parallel=int(n), latency_us=cfg["lag_replica_latency_us"])


# ----------------------------------------------------------------------------- positions

def domain0_seq(pos):
    """The seq_no of domain 0 in a GTID position such as '0-1-123,1-2-5' (0 when absent)."""
    for g in (pos or "").split(","):
        parts = g.strip().split("-")
        if len(parts) == 3 and parts[0] == "0" and parts[2].isdigit():
            return int(parts[2])
    return 0


def seqs(primary, replica):
    """(primary's domain-0 seq_no in @@gtid_binlog_pos, replica's in @@gtid_slave_pos). The
    replica is read first, so the distance between them is never below the true one's floor of 0."""
    r = replica.q("SELECT @@global.gtid_slave_pos", timeout=30)
    p = primary.q("SELECT @@global.gtid_binlog_pos", timeout=30)
    return domain0_seq(p[0][0] if p and p[0] else ""), domain0_seq(r[0][0] if r and r[0] else "")


def wait_seq(primary, replica, timeout, poll=0.2):
    """Seconds until the replica applied the primary's current domain-0 seq_no; RuntimeError when
    its replication stopped or it did not get there within timeout. Polls @@gtid_slave_pos (works
    for either replica, MASTER_GTID_WAIT is not needed)."""
    t0 = time.monotonic()
    target = seqs(primary, replica)[0]
    while True:
        if seqs(primary, replica)[1] >= target:
            return time.monotonic() - t0
        why = R.slave_broken(replica)
        if why or time.monotonic() - t0 > timeout:
            raise RuntimeError(f"the replica did not reach seq_no {target}: {why or f'still behind after {timeout}s'}")
        time.sleep(poll)


def table_hash(srv, table):
    """md5 of every row of `table` ordered by id, as the client prints them (tab-separated)."""
    h = hashlib.md5()
    p = subprocess.Popen(B.client_args(srv.port) + ["-N", "-B", "-e", f"SELECT id, k, c, pad FROM {table} ORDER BY id"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    rows = 0
    for line in p.stdout:
        h.update(line)
        rows += 1
    err = p.stderr.read().decode("utf-8", "replace")
    if p.wait(600) != 0:
        raise RuntimeError(f"{srv.system}: reading {table}: {err.strip()}")
    return h.hexdigest(), rows


def verify_tables(primary, replica, cfg):
    """None when every sysbench table holds the same rows on both servers, else the difference."""
    for i in range(1, cfg["tables"] + 1):
        t = f"sbtest.sbtest{i}"
        a, b = table_hash(primary, t), table_hash(replica, t)
        if a != b:
            return f"{t}: replica rows/md5 {b[1]}/{b[0][:12]} differ from the primary's {a[1]}/{a[0][:12]}"
    return None


# ----------------------------------------------------------------------------- one cell

def cpu_seconds(srv):
    """User + system CPU seconds the server process has used (from /proc; None when gone)."""
    try:
        with open(f"/proc/{srv.proc.pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, AttributeError, IndexError, ValueError):
        return None


class Tracker:
    """The lag samples and the fine trace of one cell, relative to the load's start."""

    def __init__(self, primary, replica, cfg):
        self.primary, self.replica, self.cfg = primary, replica, cfg
        self.t0 = time.monotonic()
        self.cpu0 = (cpu_seconds(primary), cpu_seconds(replica))
        self.trace = []  # (t, primary seq, replica seq), every lag_poll_s
        self.samples = []  # dicts, every lag_sample_s and at the load's end / catch-up
        self.next_sample = 0.0
        self.load_end = None  # seconds from the load's start to its end, once it ended
        self.broken = None

    def now(self):
        return time.monotonic() - self.t0

    def poll(self, force_sample=None):
        """One trace point; a sample (with SHOW SLAVE STATUS) when one is due or forced."""
        t = self.now()
        p, r = seqs(self.primary, self.replica)
        self.trace.append((round(t, 2), p, r))
        if force_sample or t >= self.next_sample:
            st = R.slave_status(self.replica)
            sbm = st.get("Seconds_Behind_Master")
            self.samples.append({"t": round(t, 1), "phase": force_sample or ("load" if self.load_end is None else "idle"),
                                 "sbm": int(sbm) if sbm and sbm.isdigit() else None,
                                 "gtid_distance": p - r, "primary_seq": p, "replica_seq": r})
            if not force_sample:
                self.next_sample += self.cfg["lag_sample_s"]
            # backlog mode: the replica is stopped on purpose while the load runs
            if not (self.cfg["lag_backlog"] and self.load_end is None):
                self.broken = R.slave_broken(self.replica)
        return p, r


def run_load(tr, cfg, primary):
    """sysbench on the primary for lag_seconds while the tracker polls; returns sysbench's output."""
    sb = B.sysbench(primary.port, "oltp_write_only", cfg["lag_threads"], cfg["lag_seconds"], cfg,
                    report_interval=cfg["lag_sample_s"], background=True)
    try:
        while sb.poll() is None and tr.broken is None:
            if tr.now() > cfg["lag_seconds"] + 120:
                raise RuntimeError("sysbench ran 120 s past its --time")
            tr.poll()
            time.sleep(cfg["lag_poll_s"])
        out = sb.communicate(timeout=60)[0] if sb.poll() is not None else ""
    finally:
        if sb.poll() is None:
            os.killpg(sb.pid, signal.SIGKILL)
            sb.wait()
    if tr.broken is None and sb.returncode != 0:
        raise RuntimeError(f"sysbench oltp_write_only failed: {out[-1500:]}")
    return out


def run_idle(tr, cfg):
    """Polls with the primary idle until the replica has its last GTID or the bound; returns the
    seconds from the load's end to the catch-up (None when it did not catch up)."""
    tr.load_end = tr.now()
    p, r = tr.poll(force_sample="load end")
    bound = cfg["lag_idle_factor"] * cfg["lag_seconds"]
    while tr.broken is None and tr.now() - tr.load_end <= bound:
        if r >= p:
            if tr.samples[-1]["phase"] != "load end":
                tr.poll(force_sample="caught up")
            return max(0.0, tr.trace[-1][0] - tr.load_end)
        time.sleep(cfg["lag_poll_s"])
        p, r = tr.poll()
    return None


def apply_rate(trace, t_from=0.0):
    """Groups (GTIDs) per second the replica applied over the trace intervals that start and end
    with the replica behind (it had work for the whole interval): its apply speed, not bounded by
    the primary's rate while it is behind; None when it never was behind at two polls in a row."""
    groups, secs = 0, 0.0
    for (t1, p1, r1), (t2, p2, r2) in zip(trace, trace[1:]):
        if t1 >= t_from and p1 > r1 and p2 > r2:
            groups += r2 - r1
            secs += t2 - t1
    return groups / secs if secs > 0 else None


def cpu_delta(srv, c0):
    c1 = cpu_seconds(srv)
    return None if c0 is None or c1 is None else round(c1 - c0, 2)


def per_gtid(cpu_s, tr, col):
    """CPU milliseconds per GTID: col 1 counts the primary's GTIDs, 2 the replica's."""
    n = tr.trace[-1][col] - tr.trace[0][col] if len(tr.trace) > 1 else 0
    return cpu_s * 1000 / n if cpu_s is not None and n > 0 else None


def summarize(tr, load_s, catchup, sb):
    """The cell's numbers from the tracker and sysbench's parsed output."""
    load = [s for s in tr.trace if s[0] <= load_s]
    sbms = [s["sbm"] for s in tr.samples if s["sbm"] is not None]
    ptps = (tr.trace[-1][1] - tr.trace[0][1]) / load_s if tr.trace and load_s else None
    d_end = tr.samples[-1]["gtid_distance"] if tr.samples else None
    return {
        "tps": sb.get("tps"), "p99": sb.get("p99"), "errors": sb.get("errors"),
        "primary_tps_per_interval": sb.get("intervals"), "primary_groups_per_s": ptps,
        "load_end_s": round(load_s, 1), "catchup_s": None if catchup is None else round(catchup, 2),
        "peak_sbm": max(sbms) if sbms else None,
        "peak_gtid_distance": max((p - r for _, p, r in tr.trace), default=None),
        "peak_gtid_distance_load": max((p - r for _, p, r in load), default=None),
        # backlog mode: only from the load's end (the replica was stopped during the load, so
        # the intervals before it applied nothing while behind)
        "apply_rate": apply_rate(tr.trace, load_s if tr.cfg["lag_backlog"] else 0.0),
        "replica_groups_per_s_overall": ((tr.trace[-1][2] - tr.trace[0][2]) / tr.trace[-1][0]
                                         if len(tr.trace) > 1 and tr.trace[-1][0] > 0 else None),
        "final_gtid_distance": d_end, "samples": tr.samples,
        # CPU seconds from the load's start to the end of the cell, per 1000 GTIDs applied: what
        # each server costs on a machine whose CPUs they share
        "primary_cpu_s": cpu_delta(tr.primary, tr.cpu0[0]), "replica_cpu_s": cpu_delta(tr.replica, tr.cpu0[1]),
        "replica_cpu_ms_per_gtid": per_gtid(cpu_delta(tr.replica, tr.cpu0[1]), tr, 2),
        "primary_cpu_ms_per_gtid": per_gtid(cpu_delta(tr.primary, tr.cpu0[0]), tr, 1),
        "trace": [[t, p - r] for t, p, r in tr.trace],
    }


def run_baseline(env, cfg, system):
    """The primary alone under the same load: its full speed, which the cells with a replica are
    compared against (on a machine with few CPUs the replica takes CPU time from the primary)."""
    cell = {"primary": system, "replica": "none", "threads": cfg["lag_threads"],
            "latency_us": cfg["lag_latency_us"], "load_s": cfg["lag_seconds"]}
    primary = None
    try:
        B.log(f"replica lag: {LAG_PRIMARIES[system]} primary alone (its full speed)")
        primary = R.start_primary(env, cfg, system, latency_us=cfg["lag_latency_us"])
        B.prepare(primary, cfg)
        seq0, t0 = domain0_seq(primary.q("SELECT @@global.gtid_binlog_pos")[0][0]), time.monotonic()
        cpu0 = cpu_seconds(primary)
        out = B.sysbench(primary.port, "oltp_write_only", cfg["lag_threads"], cfg["lag_seconds"], cfg)
        seq1, t1 = domain0_seq(primary.q("SELECT @@global.gtid_binlog_pos")[0][0]), time.monotonic()
        sb = B.parse_sysbench(out)
        cpu = cpu_delta(primary, cpu0)
        cell.update(tps=sb.get("tps"), p99=sb.get("p99"), errors=sb.get("errors"),
                    primary_groups_per_s=(seq1 - seq0) / (t1 - t0), primary_cpu_s=cpu,
                    primary_cpu_ms_per_gtid=cpu * 1000 / (seq1 - seq0) if cpu is not None and seq1 > seq0 else None)
        B.log(f"  {B.fmt(cell['tps'], 0)} tps, {B.fmt(cell['primary_groups_per_s'], 0)} GTIDs/s")
    except (B.StartError, RuntimeError, subprocess.TimeoutExpired, OSError, IndexError) as e:
        B.log(f"replica lag: {LAG_PRIMARIES[system]} primary alone: n/a: {e}")
        cell["na"] = str(e)[:600]
    finally:
        stop(primary)
    return cell


def run_cell(env, cfg, res, system, spec):
    base = {"primary": system, "replica": spec, "threads": cfg["lag_threads"], "latency_us": cfg["lag_latency_us"],
            "load_s": cfg["lag_seconds"]}
    label = f"{LAG_PRIMARIES[system]} primary -> {replica_label(spec)} replica"
    primary = replica = None
    cell = dict(base)
    try:
        B.log(f"replica lag: {label}: start, attach, prepare")
        primary = R.start_primary(env, cfg, system, latency_us=cfg["lag_latency_us"])
        replica = start_replica(env, cfg, primary, spec)
        B.prepare(primary, cfg)
        B.log(f"  replica caught up with prepare in {wait_seq(primary, replica, cfg['repl_catchup_s']):.1f}s")
        res.data.setdefault("profiles", {})[f"{system}/{spec}"] = {"primary": B.server_vars(primary),
                                                                  "replica": replica_vars(replica)}
    except (B.StartError, RuntimeError, subprocess.TimeoutExpired, OSError) as e:
        B.log(f"replica lag: {label}: n/a: {e}")
        cell["na"] = str(e)[:600]
        stop(primary, replica)
        return cell
    try:
        tr = Tracker(primary, replica, cfg)
        if cfg["lag_backlog"]:
            replica.q("STOP SLAVE", timeout=60)
        out = run_load(tr, cfg, primary)
        if cfg["lag_backlog"]:
            replica.q("START SLAVE", timeout=60)
        sb = B.parse_sysbench(out) if out else {}
        catchup = run_idle(tr, cfg) if tr.broken is None else None
        cell.update(summarize(tr, tr.load_end or tr.now(), catchup, sb))
        if tr.broken:
            cell["void"] = f"replication stopped: {tr.broken}"[:600]
        elif catchup is None:
            # still applying at the bound: its lag and apply rate are measured, its rows cannot be
            # compared yet
            cell["not_caught_up"] = (f"not caught up {cfg['lag_idle_factor'] * cfg['lag_seconds']} s after the "
                                     f"load (GTID distance {cell['final_gtid_distance']}); rows not compared")
        else:
            cell["void"] = verify_tables(primary, replica, cfg)
    except (RuntimeError, subprocess.TimeoutExpired, OSError, ValueError) as e:
        cell["void"] = str(e)[:600]
    finally:
        stop(primary, replica)
    B.log(f"  {B.fmt(cell.get('tps'), 0)} tps; peak Seconds_Behind_Master {cell.get('peak_sbm')}, peak GTID distance "
          f"{cell.get('peak_gtid_distance')}; apply {B.fmt(cell.get('apply_rate'), 0)} groups/s while behind; "
          f"caught up {B.fmt(cell.get('catchup_s'), 1)} s after the load" + (f"; VOID: {cell['void']}" if cell.get("void") else ""))
    return cell


def replica_vars(srv):
    out = {}
    for n in ("slave_parallel_threads", "slave_parallel_mode", "innodb_flush_log_at_trx_commit", "version"):
        try:
            rows = srv.q(f"SELECT @@global.{n}", timeout=30)
            if rows and rows[0]:
                out[n] = rows[0][0]
        except (RuntimeError, subprocess.TimeoutExpired):
            pass
    return out


def stop(*servers):
    for s in servers:
        if s:
            s.remove()


def run(env, cfg, res):
    res.data["replica_lag"] = []
    for system in cfg["lag_primaries"]:
        why = B.unavailable(env, system)
        for spec in (["none"] if cfg["lag_baseline"] else []) + cfg["lag_replicas"]:
            if why:
                cell = {"primary": system, "replica": spec, "na": why}
            elif spec.startswith("onelog") and not env.onelog:
                cell = {"primary": system, "replica": spec, "na": "no onelog binary"}
            elif spec == "none":
                cell = run_baseline(env, cfg, system)
            else:
                cell = run_cell(env, cfg, res, system, spec)
            res.data["replica_lag"].append(cell)
            res.save()
    res.save()
