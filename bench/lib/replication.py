"""bench/lib/replication.py — `bench/run --replication [--quick]` (issue 11 part 8). Not a test.

Owns: the replication benchmark. sysbench oltp_write_only against a primary with injected fsync
latency (the primary only: replicas run on the real disk without the preload library), for
onelog (engine mode) and MariaDB 10.11 (file binlog, ROW, sync_binlog=1) as primaries, with
0, 1 and 4 MariaDB 10.11 replicas attached asynchronously and with one semi-sync replica
(AFTER_SYNC, AFTER_COMMIT); per cell the primary's TPS and p99, the commit-to-replica latency
(a probe client, see `Probe`) and, after the cell, a check that every replica caught up and holds
the primary's rows.

Reuses bench.py's server startup (`Server`, with `extra` options), fsync-delay library,
sysbench driver and results store; it is called by bench.py's main and writes through
report.write_replication.

Invariants:
- every (primary, replica configuration) profile gets a fresh primary and fresh replicas
  (copies of one `mariadb-install-db` template) and stops them all before the next profile;
- a cell whose replica stopped, fell behind past the wait or differs from the primary in any
  sysbench table is kept with `void` set (its numbers are not used for verdicts);
- a profile the primary cannot run (an unknown semi-sync variable, a start failure) is recorded
  as n/a with the server's own error text; the run goes on.
"""

import os
import re
import shutil
import subprocess
import threading
import time

import bench as B

REPL_PRIMARIES = {"onelog-engine": "onelog", "mariadb-binlog": "MariaDB 10.11"}
REPL_PASSWORD = "replpw"


def make_config(args, cfg):
    q = args.quick
    cfg.update({
        "repl_seconds": B.env_int("BENCH_REPL_SECONDS", 15 if q else 60),
        "repl_threads": [int(t) for t in B.env_list("BENCH_REPL_THREADS", ["8", "32"])],
        "repl_replicas": [int(n) for n in B.env_list("BENCH_REPL_REPLICAS", ["0", "1", "4"])],
        "repl_semisync": B.env_list("BENCH_REPL_SEMISYNC", ["AFTER_SYNC", "AFTER_COMMIT"]),
        "repl_latency_us": B.env_int("BENCH_REPL_LATENCY_US", 1000),
        "repl_parallel_threads": B.env_int("BENCH_REPL_PARALLEL_THREADS", 4),
        "repl_primaries": B.env_list("BENCH_REPL_PRIMARIES", list(REPL_PRIMARIES)),
        "repl_probe_ms": B.env_int("BENCH_REPL_PROBE_MS", 50),
        "repl_catchup_s": B.env_int("BENCH_REPL_CATCHUP_S", 300),
        "repl_primary_cpus": os.environ.get("BENCH_REPL_PRIMARY_CPUS") or None,
        "repl_replica_cpus": os.environ.get("BENCH_REPL_REPLICA_CPUS") or None,
        "sections": ["replication"],
    })
    return cfg


def profiles(cfg):
    """(mode, replicas) in run order: async with each replica count, then one semi-sync replica
    per wait point."""
    return [("async", n) for n in cfg["repl_replicas"]] + [(m, 1) for m in cfg["repl_semisync"]]


# ----------------------------------------------------------------------------- servers

def replica_template(env):
    """One installed MariaDB data directory, copied for every replica (installing takes seconds)."""
    path = os.path.join(env.work, "replica-template")
    if not os.path.isdir(path):
        r = subprocess.run(["mariadb-install-db", "--no-defaults", f"--datadir={path}",
                            f"--user={B.sh('id -un')}", "--auth-root-authentication-method=normal"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise B.StartError(f"mariadb-install-db failed: {r.stdout[-1500:]}{r.stderr[-1500:]}")
    return path


def pin(srv, cpus):
    """Runs the server under `taskset -c cpus` when a CPU list is configured."""
    if cpus:
        if not shutil.which("taskset"):
            raise B.StartError("BENCH_REPL_*_CPUS is set but taskset is not installed")
        srv.wrap = ["taskset", "-c", cpus]


def start_primary(env, cfg, system, latency_us=None):
    """A fresh primary (server id 1) with a `repl` user, the injected fsync latency
    (cfg["repl_latency_us"] unless latency_us is given) and cfg["repl_primary_cpus"] pinning."""
    extra = []
    if system.startswith("mariadb"):
        # the same character set as onelog's (utf8mb4) so both primaries send the same rows
        extra = ["--character-set-server=utf8mb4", "--collation-server=utf8mb4_general_ci"]
    lat = cfg["repl_latency_us"] if latency_us is None else latency_us
    srv = B.Server(env, system, 1, 1, lat, extra=extra)
    pin(srv, cfg["repl_primary_cpus"])
    srv.start()
    srv.q(f"CREATE USER 'repl'@'%' IDENTIFIED BY '{REPL_PASSWORD}'; "
          "GRANT REPLICATION SLAVE ON *.* TO 'repl'@'%'")
    return srv


def change_master_sql(primary):
    """The statement attaching a replica (MariaDB's or onelog's) to `primary` from the start of
    its log, by GTID."""
    return (f"CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={primary.port}, MASTER_USER='repl', "
            f"MASTER_PASSWORD='{REPL_PASSWORD}', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1")


def start_replica(env, cfg, n, primary, semisync, parallel=None, latency_us=0):
    """MariaDB replica number n (server_id n + 1) of `primary`, replicating from the start of its
    log with `parallel` (default cfg["repl_parallel_threads"]) optimistic parallel threads, and
    `latency_us` of injected fsync latency (0: none, no preload)."""
    par = cfg["repl_parallel_threads"] if parallel is None else parallel
    srv = B.Server(env, "mariadb-nobinlog", 1, 0, latency_us, preload=latency_us > 0, extra=[
        f"--server-id={n + 1}", "--skip-log-bin", "--character-set-server=utf8mb4",
        "--collation-server=utf8mb4_general_ci", "--innodb-buffer-pool-size=512M",
        f"--slave-parallel-threads={par}", "--slave-parallel-mode=optimistic"])
    pin(srv, cfg["repl_replica_cpus"])
    shutil.copytree(replica_template(env), srv.data)
    srv.installed = True
    srv.start()
    if semisync:
        srv.q("SET GLOBAL rpl_semi_sync_slave_enabled=ON")
    srv.q(f"{change_master_sql(primary)}; START SLAVE")
    return srv


def server_error(e):
    """'code (SQLSTATE): message' from a failed client run's error text (the whole text when it
    holds no server error)."""
    m = re.search(r"ERROR (\d+ \(\w+\))(?: at line \d+)?: ([^\n]*)", str(e))
    return f"{m.group(1)}: {m.group(2)}" if m else str(e)


def slave_status(rep):
    r = subprocess.run(B.client_args(rep.port) + ["-B", "-e", "SHOW SLAVE STATUS"], capture_output=True,
                       text=True, timeout=60)
    lines = r.stdout.splitlines()
    if r.returncode != 0 or len(lines) < 2:
        return {"error": r.stderr.strip() or "no slave status"}
    return dict(zip(lines[0].split("\t"), lines[1].split("\t")))


def slave_broken(rep):
    st = slave_status(rep)
    # an IO thread reconnecting without an error is not broken (MASTER_CONNECT_RETRY=1)
    io_down = st.get("Slave_IO_Running") != "Yes" and (st.get("Last_IO_Error") or st.get("Slave_IO_Running") == "No")
    if st.get("Slave_SQL_Running") != "Yes" or io_down or "error" in st:
        return (f"IO={st.get('Slave_IO_Running')} SQL={st.get('Slave_SQL_Running')} "
                f"io_error={st.get('Last_IO_Error', '')!r} sql_error={st.get('Last_SQL_Error', '')!r} "
                f"{st.get('error', '')}")
    return None


def wait_caught_up(primary, replicas, timeout):
    """Seconds until every replica applied the primary's @@gtid_binlog_pos; RuntimeError when one
    stopped or did not get there within timeout."""
    pos = primary.q("SELECT @@global.gtid_binlog_pos")[0][0]
    t0 = time.monotonic()
    for i, rep in enumerate(replicas):
        while rep.q(f"SELECT MASTER_GTID_WAIT('{pos}', 1)", timeout=60)[0][0] != "0":
            why = slave_broken(rep)
            if why or time.monotonic() - t0 > timeout:
                raise RuntimeError(f"replica {i + 1} did not reach {pos}: {why or f'still behind after {timeout}s'}")
    return time.monotonic() - t0


def verify_rows(primary, replicas, cfg):
    """None when every replica has the primary's COUNT(*) and SUM(k) in every sysbench table and
    the probe table, else the first difference."""
    sql = "; ".join(f"SELECT COUNT(*), COALESCE(SUM(k), 0) FROM sbtest.sbtest{i}"
                    for i in range(1, cfg["tables"] + 1)) + "; SELECT COUNT(*), 0 FROM probe.t"
    want = primary.q(sql)
    for i, rep in enumerate(replicas):
        got = rep.q(sql)
        if got != want:
            return f"replica {i + 1}: rows (count, sum k) per table {got} differ from the primary's {want}"
    return None


# ----------------------------------------------------------------------------- probe

class Probe:
    """Commit-to-replica latency: one client inserts a numbered row on the primary every
    `interval` seconds (autocommit), noting when the OK came back; another polls the first
    replica's MAX(id) about every 2 ms and notes when each id became visible. Latency = visible
    on the replica − acknowledged on the primary (one monotonic clock, one machine); ids are
    written in order by one client and the replica commits in order, so MAX(id) = n means
    rows 1..n are visible."""

    def __init__(self, primary, replica, interval, base):
        self.primary, self.replica, self.interval, self.base = primary, replica, interval, base
        self.acked, self.seen = {}, {}
        self.stop = threading.Event()
        self.writer_done = threading.Event()
        self.threads = []

    def start(self):
        self.threads = [threading.Thread(target=self._write), threading.Thread(target=self._poll)]
        for t in self.threads:
            t.start()

    def _write(self):
        cli = B.Cli(self.primary.port)
        i = 0
        try:
            while not self.stop.is_set():
                i += 1
                t0 = time.monotonic()
                if cli.run(f"INSERT INTO probe.t (id) VALUES ({self.base + i})") is None:
                    break
                t1 = time.monotonic()
                self.acked[self.base + i] = t1
                time.sleep(max(0.0, self.interval - (t1 - t0)))
        finally:
            self.writer_done.set()
            cli.close()

    def _poll(self):
        cli = B.Cli(self.replica.port)
        last = self.base
        deadline = None
        try:
            while True:
                if self.writer_done.is_set():
                    deadline = deadline or time.monotonic() + 60
                    if last >= max(self.acked, default=self.base) or time.monotonic() > deadline:
                        break
                rows = cli.run(f"SELECT COALESCE(MAX(id), 0) FROM probe.t WHERE id > {self.base}")
                now = time.monotonic()
                if rows is None:
                    break
                top = int(rows[0]) if rows and rows[0].isdigit() else 0
                for x in range(last + 1, top + 1):
                    self.seen[x] = now
                last = max(last, top)
                time.sleep(0.002)
        finally:
            cli.close()

    def finish(self):
        self.stop.set()
        for t in self.threads:
            t.join(120)
        series = [(self.seen[x] - a) * 1000 for x, a in sorted(self.acked.items()) if x in self.seen]
        lat = sorted(series)
        pct = (lambda p: lat[min(len(lat) - 1, int(p / 100 * len(lat)))] if lat else None)
        # the median of each quarter of the cell: a lag that grows over the cell (the replica
        # applies slower than the primary commits) shows as a rising trend
        q = max(1, len(series) // 4)
        trend = [round(sorted(series[i:i + q])[len(series[i:i + q]) // 2], 1) for i in range(0, len(series), q)][:4]
        return {"c2r_n": len(lat), "c2r_missing": len(self.acked) - len(lat), "c2r_p50": pct(50),
                "c2r_p99": pct(99), "c2r_max": lat[-1] if lat else None, "c2r_quarter_p50": trend}


# ----------------------------------------------------------------------------- cells

def semi_status(srv):
    st = srv.status()
    return {k: B.num(st, k) for k in ("Rpl_semi_sync_master_yes_tx", "Rpl_semi_sync_master_no_tx",
                                      "Rpl_semi_sync_master_clients")} | {
        "Rpl_semi_sync_master_status": st.get("Rpl_semi_sync_master_status")}


def wait_semi_clients(primary, n, timeout=30):
    """Waits (bounded) until n semi-sync replicas are connected, so no commit waits out the
    semi-sync timeout for a replica that is still connecting."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        c = semi_status(primary)["Rpl_semi_sync_master_clients"]
        if c is None or c >= n:
            return
        time.sleep(0.1)


def run_cell(env, cfg, primary, replicas, mode, threads, probe_base):
    s0 = B.snapshot(primary)
    semi0 = semi_status(primary) if mode != "async" else None
    probe = Probe(primary, replicas[0], cfg["repl_probe_ms"] / 1000, probe_base) if replicas else None
    if probe:
        probe.start()
    try:
        out = B.sysbench(primary.port, "oltp_write_only", threads, cfg["repl_seconds"], cfg)
    finally:
        t_end = time.monotonic()
        c2r = probe.finish() if probe else {}
    s1 = B.snapshot(primary)
    cell = B.measure_cell(primary, s0, s1, out)
    cell.update(c2r)
    if mode != "async":
        semi1 = semi_status(primary)
        cell["semi_sync"] = {k: (semi1[k] - semi0[k] if isinstance(semi1[k], int) and isinstance(semi0[k], int)
                                 else semi1[k]) for k in semi1}
    if replicas:
        try:
            # from the end of the sysbench run until every replica has applied everything
            wait_caught_up(primary, replicas, cfg["repl_catchup_s"])
            cell["catchup_s"] = time.monotonic() - t_end
            cell["void"] = verify_rows(primary, replicas, cfg)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            cell["void"] = str(e)[:600]
    if mode != "async" and not cell.get("void"):
        ss = cell["semi_sync"]
        if ss.get("Rpl_semi_sync_master_yes_tx") is None:
            cell["semi_sync_unverified"] = "the primary has no Rpl_semi_sync_master_yes_tx status"
        elif not ss["Rpl_semi_sync_master_yes_tx"] or ss.get("Rpl_semi_sync_master_no_tx"):
            cell["void"] = f"semi-sync did not acknowledge every transaction: {ss}"
    return cell


def run_profile(env, cfg, res, system, mode, nrep):
    label = f"{REPL_PRIMARIES[system]} primary, {nrep} replica(s), {mode}"
    base = {"primary": system, "mode": mode, "replicas": nrep, "latency_us": cfg["repl_latency_us"]}
    primary, replicas = None, []
    try:
        B.log(f"replication: {label}: start, attach, prepare")
        primary = start_primary(env, cfg, system)
        if mode != "async":
            try:
                primary.q("SET GLOBAL rpl_semi_sync_master_enabled=ON, "
                          f"rpl_semi_sync_master_wait_point='{mode}', rpl_semi_sync_master_timeout=60000")
            except RuntimeError as e:
                raise RuntimeError(f"the primary refused semi-sync: {server_error(e)}") from None
        replicas = [start_replica(env, cfg, i + 1, primary, mode != "async") for i in range(nrep)]
        if mode != "async":
            wait_semi_clients(primary, nrep)
        B.prepare(primary, cfg)
        primary.q("CREATE DATABASE probe; CREATE TABLE probe.t (id BIGINT NOT NULL PRIMARY KEY)")
        if replicas:
            B.log(f"  replicas caught up with prepare in {wait_caught_up(primary, replicas, cfg['repl_catchup_s']):.1f}s")
        res.data.setdefault("profiles", {})[f"{system}/{mode}/{nrep}"] = B.server_vars(primary)
        if cfg["profile_warmup"]:
            B.sysbench(primary.port, "oltp_write_only", 8, cfg["profile_warmup"], cfg)
        for k, t in enumerate(cfg["repl_threads"]):
            if replicas:
                wait_caught_up(primary, replicas, cfg["repl_catchup_s"])
            if cfg["cell_warmup"]:
                B.sysbench(primary.port, "oltp_write_only", t, cfg["cell_warmup"], cfg)
            cell = run_cell(env, cfg, primary, replicas, mode, t, (k + 1) * 10_000_000)
            cell.update(base, threads=t)
            res.data["replication"].append(cell)
            res.save()
            B.log(f"  {t} threads: {cell.get('tps')} tps p99 {cell.get('p99')} ms; commit-to-replica p50 "
                  f"{B.fmt(cell.get('c2r_p50'), 1)} p99 {B.fmt(cell.get('c2r_p99'), 1)} ms "
                  f"({cell.get('c2r_n', 0)} probes); caught up in {B.fmt(cell.get('catchup_s'), 1)}s"
                  + (f"; VOID: {cell['void']}" if cell.get("void") else ""))
    except (B.StartError, RuntimeError, subprocess.TimeoutExpired, OSError) as e:
        B.log(f"replication: {label}: {e}")
        done = {c["threads"] for c in res.data["replication"]
                if (c["primary"], c["mode"], c["replicas"]) == (system, mode, nrep)}
        for t in cfg["repl_threads"]:
            if t not in done:
                res.data["replication"].append(dict(base, threads=t, na=str(e)[:600]))
        res.save()
    finally:
        for rep in replicas:
            rep.remove()
        if primary:
            primary.remove()


def run(env, cfg, res):
    res.data["replication"] = []
    for system in cfg["repl_primaries"]:
        why = B.unavailable(env, system)
        for mode, nrep in profiles(cfg):
            if why:
                res.data["replication"] += [{"primary": system, "mode": mode, "replicas": nrep,
                                             "threads": t, "na": why} for t in cfg["repl_threads"]]
                continue
            run_profile(env, cfg, res, system, mode, nrep)
    res.save()
