"""bench/lib/backup.py — `bench/run --backup [--quick]` (issue 13 part 7). Not a test.

Owns: the backup/restore benchmark. For each server (onelog in engine mode at D1; MariaDB 10.11
with log_bin, ROW, sync_binlog=1, innodb_flush_log_at_trx_commit=1) on a fresh data directory:
`sysbench prepare` of `backup_tables` × `backup_table_size` rows, a warm-up, then sysbench
oltp_write_only (`backup_threads` threads, `backup_seconds` s, --report-interval=1) without a
backup (TPS without), then the same load again with a backup started `backup_delay_s` into it
(TPS during = the mean of the 1-second intervals overlapping the backup's run), the backup's
wall time and size (MB/s = bytes of the backup directory / wall); the server is stopped, then
the restore is timed (onelog: `onelog restore --target-dir=NEW B`; MariaDB: `mariadb-backup
--prepare` in place, then `--copy-back` into NEW, timed apart), the backup or the restored
directory is verified (onelog: `onelog check`), and a server started on NEW must hold exactly
`backup_table_size` rows in every table (oltp_write_only's delete + insert pair keeps that
count in every committed state) with CHECK TABLE OK; the restored onelog server's
@@gtid_binlog_pos must be the manifest's end_gtid_pos.

Reuses bench.py (servers, sysbench driver and parser, results store); called by bench.py's
main; report.write_backup writes the docs.

Invariants:
- one server runs at a time (the restored one after the original is stopped), each on a fresh
  data directory; the backup and the restore run as separate processes on this host;
- every wait is bounded: the load by sysbench's --time (killed 120 s after), the backup and the
  restore by `backup_timeout_s`, every query by a timeout;
- a server whose backup tool is missing or fails is recorded as n/a with the tool's own error
  text; the run goes on.
"""

import datetime
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import time

import bench as B

BACKUP_SYSTEMS = {"onelog-engine": "onelog", "mariadb-binlog": "MariaDB 10.11"}


def make_config(args, cfg):
    q = args.quick
    cfg.update({
        "backup_tables": B.env_int("BENCH_BACKUP_TABLES", 4),
        "backup_table_size": B.env_int("BENCH_BACKUP_TABLE_SIZE", 100000 if q else 1000000),
        "backup_threads": B.env_int("BENCH_BACKUP_THREADS", 8),
        "backup_seconds": B.env_int("BENCH_BACKUP_SECONDS", 30 if q else 90),
        "backup_warmup": B.env_int("BENCH_BACKUP_WARMUP", 5 if q else 15),
        "backup_delay_s": B.env_int("BENCH_BACKUP_DELAY_S", 5 if q else 10),
        "backup_timeout_s": B.env_int("BENCH_BACKUP_TIMEOUT_S", 1800),
        "backup_systems": B.env_list("BENCH_BACKUP_SYSTEMS", list(BACKUP_SYSTEMS)),
        "sections": ["backup"],
    })
    return cfg


# ----------------------------------------------------------------------------- helpers

def dir_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                pass
    return total


def children_cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def timed(cmd, timeout, what, cpu=None):
    """Runs cmd; returns (seconds, stdout + stderr). A failure raises RuntimeError with the tail.
    With a dict as cpu, cpu[what] = the command's user + system CPU seconds (the children reaped
    meanwhile: only cmd, as a background load is reaped after)."""
    t0, c0 = time.monotonic(), children_cpu()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    wall = time.monotonic() - t0
    if cpu is not None:
        cpu[what] = round(children_cpu() - c0, 2)
    out = r.stdout + r.stderr
    if r.returncode != 0:
        raise RuntimeError(f"{what} failed (exit {r.returncode}): {out[-1500:]}")
    return wall, out


def interval_tps(intervals, t_from, t_to):
    """Mean TPS of sysbench's 1-second report intervals overlapping [t_from, t_to) (seconds from the
    load's start; interval k covers [k-1, k)), and how many there were."""
    xs = [tps for k, tps in enumerate(intervals, 1) if k > t_from and k - 1 < t_to]
    return (sum(xs) / len(xs) if xs else None), len(xs)


def write_load(srv, cfg, seconds):
    return B.sysbench(srv.port, "oltp_write_only", cfg["backup_threads"], seconds, cfg,
                      tables=cfg["backup_tables"], table_size=cfg["backup_table_size"], report_interval=1,
                      background=True)


def finish_load(proc, seconds):
    try:
        out, _ = proc.communicate(timeout=seconds + 120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        raise RuntimeError("sysbench did not end 120 s after its --time") from None
    if proc.returncode != 0:
        raise RuntimeError(f"sysbench oltp_write_only failed: {out[-1500:]}")
    return B.parse_sysbench(out)


def kill_load(proc):
    if proc and proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.wait()


# ----------------------------------------------------------------------------- per-server tools

def backup_cmd(env, srv, target):
    if srv.spec["kind"] == "onelog":
        return [env.onelog, "backup", f"--target-dir={target}", "--host=127.0.0.1", f"--port={srv.port}",
                "--user=bk", "--password=bk"]
    return ["mariadb-backup", "--no-defaults", "--backup", f"--target-dir={target}", f"--datadir={srv.data}",
            "--host=127.0.0.1", f"--port={srv.port}", "--user=root", "--password="]


def setup_account(srv):
    """onelog: the RELOAD account of docs/BACKUP.md (MariaDB's backup runs as root, which has it)."""
    if srv.spec["kind"] == "onelog":
        srv.q("CREATE USER 'bk'@'127.0.0.1' IDENTIFIED BY 'bk'")
        srv.q("GRANT RELOAD ON *.* TO 'bk'@'127.0.0.1'")


def manifest(path):
    vals = {}
    try:
        with open(os.path.join(path, "backup.info")) as fh:
            for line in fh:
                k, _, v = line.rstrip("\n").partition(" ")
                if k != "file":
                    vals.setdefault(k, v)
                    continue
                parts = v.split()  # <path> <bytes> <crc> [segment ...]
                if len(parts) >= 2 and parts[1].isdigit():
                    key = "checkpoint_bytes" if parts[0].startswith("checkpoints/") else "log_bytes"
                    vals[key] = vals.get(key, 0) + int(parts[1])
    except OSError:
        pass
    return vals


def restore(env, cfg, srv, bdir, new, cell):
    """Times the restore of bdir into new (a fresh server's data path) and verifies it offline."""
    tmo = cfg["backup_timeout_s"]
    if srv.spec["kind"] == "onelog":
        cell["restore_s"], _ = timed([env.onelog, "restore", f"--target-dir={new}", bdir], tmo, "onelog restore",
                                     cell.setdefault("cpu_s", {}))
        _, out = timed([env.onelog, "check", new], tmo, "onelog check")
        m = re.search(r"GTID position: *(\S*)", out)
        cell["check"] = "ok" + (f", GTID position {m.group(1)}" if m else "")
        cell["copy_back_s"] = None
    else:
        cell["restore_s"], _ = timed(["mariadb-backup", "--no-defaults", "--prepare", f"--target-dir={bdir}"],
                                     tmo, "mariadb-backup --prepare", cell.setdefault("cpu_s", {}))
        cell["copy_back_s"], _ = timed(["mariadb-backup", "--no-defaults", "--copy-back", f"--target-dir={bdir}",
                                        f"--datadir={new}"], tmo, "mariadb-backup --copy-back")
        cell["check"] = "prepare ok"
    cell["restored_bytes"] = dir_bytes(new)


def verify_restored(cfg, rsrv, cell):
    """Row counts (every table must hold backup_table_size rows) and CHECK TABLE on the restored server."""
    counts, bad = [], []
    for i in range(1, cfg["backup_tables"] + 1):
        t = f"sbtest.sbtest{i}"
        counts.append(int(rsrv.q(f"SELECT COUNT(*) FROM {t}")[0][0]))
        try:
            rows = rsrv.q(f"CHECK TABLE {t}")
            if not any(r[-1] == "OK" for r in rows):
                bad.append(f"{t}: {rows}")
        except RuntimeError as e:
            if "1064" not in str(e):  # onelog without CHECK TABLE: the offline check stands for it
                bad.append(f"{t}: {e}")
    cell["restored_rows"] = counts
    cell["rows_ok"] = all(c == cfg["backup_table_size"] for c in counts)
    if bad:
        cell["check_table"] = "; ".join(bad)[:600]
    if rsrv.spec["kind"] == "onelog":
        pos = rsrv.q("SELECT @@global.gtid_binlog_pos")[0][0]
        cell["restored_gtid_pos"] = pos
        cell["gtid_ok"] = pos == cell.get("end_gtid_pos")
    cell["verified"] = cell["rows_ok"] and not bad and cell.get("gtid_ok", True)


# ----------------------------------------------------------------------------- one server

def run_backup_during_load(env, cfg, srv, bdir, cell):
    """The second load with the backup started backup_delay_s into it."""
    load = write_load(srv, cfg, cfg["backup_seconds"])
    try:
        t0 = time.monotonic()
        time.sleep(cfg["backup_delay_s"])
        bs = time.monotonic() - t0
        wall, out = timed(backup_cmd(env, srv, bdir), cfg["backup_timeout_s"], "backup", cell.setdefault("cpu_s", {}))
        be = time.monotonic() - t0
        sb = finish_load(load, cfg["backup_seconds"])
        load = None
    finally:
        kill_load(load)
    cell.update(backup_s=wall, backup_start_s=bs, backup_end_s=be, backup_bytes=dir_bytes(bdir),
                backup_tail=out[-600:], during_intervals=sb["intervals"], during_run_tps=sb.get("tps"))
    cell["backup_mb_s"] = cell["backup_bytes"] / 1e6 / wall if wall > 0 else None
    cell["tps_during"], cell["intervals_during"] = interval_tps(sb["intervals"], bs, be)
    cell["load_ended_first"] = be > cfg["backup_seconds"]
    B.log(f"  backup {wall:.1f}s, {cell['backup_bytes'] / 1e6:.0f} MB ({cell['backup_mb_s']:.0f} MB/s); TPS during "
          f"{cell['tps_during'] or 0:.0f} over {cell['intervals_during']} intervals")


def run_server(env, cfg, system):
    label = BACKUP_SYSTEMS.get(system, system)
    cell = {"system": system, "label": label}
    if B.unavailable(env, system) or (system.startswith("onelog") and not env.onelog):
        cell["na"] = B.unavailable(env, system) or "no onelog binary"
        return cell
    if system.startswith("mariadb") and not shutil.which("mariadb-backup"):
        cell["na"] = "mariadb-backup missing (apt-get install mariadb-backup)"
        return cell
    srv = B.Server(env, system, 1, 1, 0, max_binlog_size="256M")
    rsrv = None
    bdir = os.path.join(srv.dir, "backup")
    try:
        B.log(f"backup: {label}: start, prepare {cfg['backup_tables']} x {cfg['backup_table_size']} rows")
        srv.start()
        setup_account(srv)
        t0 = time.monotonic()
        B.prepare(srv, cfg, tables=cfg["backup_tables"], table_size=cfg["backup_table_size"])
        cell["prepare_s"] = time.monotonic() - t0
        if cfg["backup_warmup"]:
            B.sysbench(srv.port, "oltp_write_only", cfg["backup_threads"], cfg["backup_warmup"], cfg,
                       tables=cfg["backup_tables"], table_size=cfg["backup_table_size"])
        cell["data_bytes"] = dir_bytes(srv.data)
        sb = finish_load(write_load(srv, cfg, cfg["backup_seconds"]), cfg["backup_seconds"])
        cell["tps_without"], cell["without_intervals"] = sb.get("tps"), sb["intervals"]
        B.log(f"  TPS without a backup {cell['tps_without'] or 0:.0f}; data directory {cell['data_bytes'] / 1e6:.0f} MB")
        run_backup_during_load(env, cfg, srv, bdir, cell)
        cell.update({k: v for k, v in manifest(bdir).items() if k in ("end_lsn", "start_lsn", "end_gtid_pos",
                                                                 "checkpoint_bytes", "log_bytes")})
        srv.stop()
        rsrv = B.Server(env, system, 1, 1, 0, max_binlog_size="256M")
        rsrv.installed = True  # its data directory is the restore's
        restore(env, cfg, srv, bdir, rsrv.data, cell)
        B.log(f"  restore {cell['restore_s']:.1f}s" + (f", copy-back {cell['copy_back_s']:.1f}s"
                                                         if cell["copy_back_s"] is not None else ""))
        cell["restored_start_s"] = rsrv.start()
        verify_restored(cfg, rsrv, cell)
        B.log(f"  restored server: rows {cell['restored_rows']}, verified={cell['verified']}")
    except (B.StartError, RuntimeError, subprocess.TimeoutExpired, ValueError, IndexError) as e:
        B.log(f"backup: {label}: {e}")
        cell["na"] = f"failed: {str(e)[:900]}"
    finally:
        for s in (rsrv, srv):
            if s:
                s.remove()
    return cell


def previous_cells(path):
    """With BENCH_BACKUP_MERGE=1: the cells of an earlier run's results at path (read before this
    run rewrites it), so a run of one server (BENCH_BACKUP_SYSTEMS) keeps the other's numbers."""
    if os.environ.get("BENCH_BACKUP_MERGE") != "1":
        return []
    try:
        with open(path) as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return []
    cells = data.get("backup") or []
    for c in cells:
        c.setdefault("measured_at", data.get("generated"))
        c.setdefault("loadavg_at_start", data.get("machine", {}).get("loadavg_before"))
    return cells


def run(env, cfg, res, previous=()):
    res.data["backup"] = []
    for system in cfg["backup_systems"]:
        at = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        load = open("/proc/loadavg").read().split()[:3]
        cell = run_server(env, cfg, system)
        cell.update(measured_at=at, loadavg_at_start=load)
        res.data["backup"].append(cell)
        res.save()
    for c in previous:
        if c.get("system") not in cfg["backup_systems"]:
            c["earlier_run"] = True
            res.data["backup"].append(c)
    order = list(BACKUP_SYSTEMS)
    res.data["backup"].sort(key=lambda c: order.index(c["system"]) if c.get("system") in order else len(order))
    res.save()
