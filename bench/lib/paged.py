"""bench/lib/paged.py — `bench/run --paged [--quick]` (issue 17 part 5). Not a test.

Owns: the data-larger-than-memory benchmark. sysbench's tables are loaded into each system
(`sysbench oltp_read_only prepare`: multi-row INSERTs, then the secondary index), then
oltp_point_select, oltp_read_only and oltp_write_only run for `p_seconds` each at `p_threads`
threads. Two data sizes, each against a cache of `p_cache`:

- "larger": `p_tables` x `p_rows` rows (the issue: 4 x 2.5M rows, a 1 GB cache, so the data is
  several times the cache);
- "fits": `p_tables` x `p_fit_rows` rows, which fit in the same cache.

Systems (one at a time, each on a fresh data directory, stopped before the next starts):
- `onelog-paged`: `--table-store=paged --innodb-buffer-pool-size=<p_cache>`;
- `onelog-memory`: today's in-memory store (the "fits" baseline: the issue's goal is that the
  paged store, fitting in its cache, is no test more than 15% slower than it);
- `mariadb`: MariaDB 10.11, InnoDB with `--innodb-buffer-pool-size=<p_cache>`, binlog on, ROW,
  `sync_binlog=1`, `innodb_flush_log_at_trx_commit=1` (the durable configuration onelog's
  log gives by construction).

Every server runs with the fsync-delay library at `p_latency_us` (1 ms: the issue's injected
fsync latency for oltp_write_only; the load and the reads run under it too, and read tests do
not sync). Printed per system and test: TPS (load: seconds), the server's resident memory
(VmRSS sampled every 50 ms: peak and mean over the test), and once per system the table
store's bytes on disk after the runs and per row (onelog: `checkpoints/`, which holds the
paged store's `base/` or the in-memory store's checkpoint file; MariaDB: `sbtest/*.ibd`;
allocated blocks, after a clean stop, and for the paged store again after one more start and
stop: fjall deletes the files a compaction replaced only when a later compaction collects the
version that held them, or at open, so right after the runs its directory can hold a
compaction's inputs beside their outputs; bytes per row are counted after the restart).

Then, for the fitting case, **side by side, warm** (`p_rounds` > 0 and both onelog systems
selected): a fresh onelog-paged and a fresh onelog-memory server, both loaded and both left
running (idle while the other is measured), each warmed by `p_warm_seconds` of
oltp_point_select and of oltp_read_only, then every test in `p_rounds` rounds of
`p_round_seconds`, the two servers in turn within each round. The first pass above starts each
test cold right after the load and compares numbers taken minutes apart; on a shared machine
whose speed drifts by more than the 15% the goal allows, only rounds taken in turn compare the
two stores, and "fitting in cache" means the cache holds the data, i.e. warm. Printed: the
median TPS of each system per test, their ratio, and every round's pair.

Invariants: one server at a time is measured (two are up only in the side-by-side phase, the
other idle); every client call and server start is bounded; a system that fails is reported
n/a with the reason and the run goes on.
"""

import os
import statistics
import subprocess
import threading
import time

import bench as B

PAGED_SYSTEMS = {
    "onelog-paged": ("onelog-engine", "onelog paged"),
    "onelog-memory": ("onelog-engine", "onelog in-memory"),
    "mariadb": ("mariadb-binlog", "MariaDB 10.11"),
}
TESTS = ["oltp_point_select", "oltp_read_only", "oltp_write_only"]


def make_config(args, cfg):
    q = args.quick
    cfg.update({
        "p_tables": B.env_int("BENCH_PAGED_TABLES", 4),
        "p_rows": B.env_int("BENCH_PAGED_ROWS", 40000 if q else 2500000),
        "p_fit_rows": B.env_int("BENCH_PAGED_FIT_ROWS", 5000 if q else 250000),
        "p_cache": os.environ.get("BENCH_PAGED_CACHE", "16M" if q else "1G"),
        "p_seconds": B.env_int("BENCH_PAGED_SECONDS", 5 if q else 30),
        "p_threads": B.env_int("BENCH_PAGED_THREADS", 8),
        "p_latency_us": B.env_int("BENCH_PAGED_LATENCY_US", 1000),
        "p_systems": B.env_list("BENCH_PAGED_SYSTEMS", list(PAGED_SYSTEMS)),
        "p_rounds": B.env_int("BENCH_PAGED_ROUNDS", 2 if q else 4),
        "p_round_seconds": B.env_int("BENCH_PAGED_ROUND_SECONDS", 5 if q else 10),
        "p_warm_seconds": B.env_int("BENCH_PAGED_WARM_SECONDS", 5 if q else 20),
        "sections": ["paged"],
    })
    return cfg


class RssSampler:
    """VmRSS of `pid` every 50 ms between start() and stop(): (peak, mean) in bytes."""

    def __init__(self, pid):
        self.pid = pid
        self.samples = []
        self.halt = threading.Event()
        self.th = None

    def read(self):
        return B.proc_status_bytes(self.pid, "VmRSS")

    def loop(self):
        while not self.halt.wait(0.05):
            v = self.read()
            if v is not None:
                self.samples.append(v)

    def start(self):
        self.samples, self.halt = [], threading.Event()
        self.th = threading.Thread(target=self.loop, daemon=True)
        self.th.start()

    def stop(self):
        self.halt.set()
        self.th.join(5)
        s = self.samples or [self.read() or 0]
        return {"rss_peak": max(s), "rss_mean": int(statistics.mean(s))}


def allocated(path):
    """Bytes the file takes on disk (its blocks: fjall's journal is a sparse 64 MiB file)."""
    try:
        return os.stat(path).st_blocks * 512
    except OSError:
        return 0


def store_bytes(srv):
    """The table store's bytes on disk (module docs); read after the server stopped, so both
    systems have written their last checkpoint."""
    if srv.spec["kind"] == "onelog":
        return sum(allocated(os.path.join(root, f))
                   for root, _dirs, files in os.walk(os.path.join(srv.data, "checkpoints")) for f in files)
    d = os.path.join(srv.data, "sbtest")
    return sum(allocated(os.path.join(d, f)) for f in os.listdir(d) if f.endswith(".ibd"))


def run_system(env, cfg, size, rows, system):
    base_system, label = PAGED_SYSTEMS[system]
    cell = {"size": size, "rows": rows, "system": system, "label": label, "tests": {}}
    if base_system.startswith("onelog") and not env.onelog:
        cell["na"] = "no onelog binary"
        return cell
    extra = {"onelog-paged": ["--table-store=paged", f"--innodb-buffer-pool-size={cfg['p_cache']}"],
             "onelog-memory": [],
             "mariadb": [f"--innodb-buffer-pool-size={cfg['p_cache']}"]}[system]
    srv = B.Server(env, base_system, 1, 1, cfg["p_latency_us"], extra=extra)
    try:
        B.log(f"paged: {size}: {label}: start, load {cfg['p_tables']} x {rows} rows")
        srv.start()
        srv.q("CREATE DATABASE sbtest")
        rss = RssSampler(srv.proc.pid)
        rss.start()
        t0 = time.monotonic()
        B.sysbench(srv.port, "oltp_read_only", cfg["p_threads"], 0, cfg, command="prepare",
                   tables=cfg["p_tables"], table_size=rows)
        cell["load_s"] = time.monotonic() - t0
        cell["load"] = rss.stop()
        B.log(f"  load: {cell['load_s']:.1f} s, RSS peak {cell['load']['rss_peak'] >> 20} MiB")
        for test in TESTS:
            rss.start()
            out = B.sysbench(srv.port, test, cfg["p_threads"], cfg["p_seconds"], cfg,
                             tables=cfg["p_tables"], table_size=rows)
            r = B.parse_sysbench(out)
            r.update(rss.stop())
            cell["tests"][test] = r
            B.log(f"  {test}: {r.get('tps', 0):.0f} TPS, RSS peak {r['rss_peak'] >> 20} MiB, "
                  f"mean {r['rss_mean'] >> 20} MiB")
        st = srv.status()
        cell["status"] = {k: v for k, v in st.items()
                          if k.startswith(("Innodb_buffer_pool_read", "Innodb_data_", "Onelog_table_store_"))}
        srv.stop()
        cell["store_bytes_at_stop"] = store_bytes(srv)
        if system == "onelog-paged":
            # fjall deletes a compaction's input files only when a later compaction collects
            # the version that held them (its ingestions never do); an open collects them all.
            srv.start()
            srv.stop()
        cell["store_bytes"] = store_bytes(srv)
        cell["bytes_per_row"] = cell["store_bytes"] / max(rows * cfg["p_tables"], 1)
        B.log(f"  store: {cell['store_bytes_at_stop'] >> 20} MiB on disk at stop, "
              f"{cell['store_bytes'] >> 20} MiB after a restart, {cell['bytes_per_row']:.0f} bytes/row")
    except (B.StartError, RuntimeError, subprocess.TimeoutExpired) as e:
        cell["na"] = str(e)[-600:]
        B.log(f"  n/a: {cell['na']}")
    finally:
        srv.remove()
    return cell


def run(env, cfg, res):
    res.data["paged"] = []
    for size, rows in (("larger", cfg["p_rows"]), ("fits", cfg["p_fit_rows"])):
        for system in cfg["p_systems"]:
            if system == "onelog-memory" and size == "larger":
                continue  # the in-memory store is the baseline of the fitting case only
            res.data["paged"].append(run_system(env, cfg, size, rows, system))
            res.save()
    pair = ["onelog-paged", "onelog-memory"]
    if cfg["p_rounds"] > 0 and env.onelog and all(s in cfg["p_systems"] for s in pair):
        res.data["paged_side_by_side"] = run_side_by_side(env, cfg, pair)
        res.save()


def run_side_by_side(env, cfg, systems):
    """The fitting case warm, the two onelog stores in turn (module docs)."""
    rows = cfg["p_fit_rows"]
    out = {"rows": rows, "systems": systems, "rounds": {t: [] for t in TESTS}}
    servers = []
    try:
        for system in systems:
            extra = ["--table-store=paged", f"--innodb-buffer-pool-size={cfg['p_cache']}"] \
                if system == "onelog-paged" else []
            srv = B.Server(env, PAGED_SYSTEMS[system][0], 1, 1, cfg["p_latency_us"], extra=extra)
            servers.append(srv)
            B.log(f"paged: side by side: {system}: start, load {cfg['p_tables']} x {rows} rows, warm")
            srv.start()
            srv.q("CREATE DATABASE sbtest")
            B.sysbench(srv.port, "oltp_read_only", cfg["p_threads"], 0, cfg, command="prepare",
                       tables=cfg["p_tables"], table_size=rows)
            for test in ("oltp_point_select", "oltp_read_only"):
                B.sysbench(srv.port, test, cfg["p_threads"], cfg["p_warm_seconds"], cfg,
                           tables=cfg["p_tables"], table_size=rows)
        for test in TESTS:
            for n in range(cfg["p_rounds"]):
                pair = {}
                for system, srv in zip(systems, servers):
                    r = B.parse_sysbench(B.sysbench(srv.port, test, cfg["p_threads"],
                                                    cfg["p_round_seconds"], cfg,
                                                    tables=cfg["p_tables"], table_size=rows))
                    pair[system] = r.get("tps", 0)
                out["rounds"][test].append(pair)
                B.log(f"  {test} round {n + 1}: " + ", ".join(f"{k} {v:,.0f}" for k, v in pair.items()))
        out["rss"] = {system: B.proc_status_bytes(srv.proc.pid, "VmRSS")
                      for system, srv in zip(systems, servers)}
        st = servers[0].status()
        out["status"] = {k: v for k, v in st.items()
                         if k.startswith(("Innodb_buffer_pool_read", "Innodb_buffer_pool_bytes",
                                          "Onelog_table_store_row_cache"))}
        B.log(f"  {systems[0]} status: {out['status']}")
    except (B.StartError, RuntimeError, subprocess.TimeoutExpired) as e:
        out["na"] = str(e)[-600:]
        B.log(f"  n/a: {out['na']}")
    finally:
        for srv in servers:
            srv.remove()
    return out


def side_by_side_table(sbs, cfg):
    """Markdown for [`run_side_by_side`]'s result."""
    if not sbs:
        return []
    head = (f"**fits, warm, side by side**: {sbs['rows'] * cfg['p_tables']:,} rows, both servers "
            f"loaded and warmed ({cfg['p_warm_seconds']} s of oltp_point_select and of "
            f"oltp_read_only each), then {cfg['p_rounds']} rounds of {cfg['p_round_seconds']} s per "
            "test, the two in turn within each round")
    if sbs.get("na"):
        return [head, "", f"n/a: {sbs['na'][:200]}", ""]
    a, b = sbs["systems"]
    out = [head, "", f"| test | {a} TPS (median) | {b} TPS (median) | {a} / {b} | rounds ({a} / {b}) |",
           "|---|---|---|---|---|"]
    for t in TESTS:
        rs = sbs["rounds"].get(t) or []
        if not rs:
            continue
        ma = statistics.median(r[a] for r in rs)
        mb = statistics.median(r[b] for r in rs)
        pairs = "; ".join(f"{r[a]:,.0f} / {r[b]:,.0f}" for r in rs)
        out.append(f"| {t} | {ma:,.0f} | {mb:,.0f} | {B.fmt(ma / mb) if mb else 'n/a'} | {pairs} |")
    rss = sbs.get("rss") or {}
    out += ["", f"RSS after the rounds: {a} {mib(rss.get(a))} MiB, {b} {mib(rss.get(b))} MiB.", ""]
    return out


# ----------------------------------------------------------------------------- report

def mib(v):
    return "" if v is None else f"{v / (1 << 20):,.0f}"


def tables(data):
    cfg, mc = data["config"], data["machine"]
    cells = data.get("paged", [])
    out = [f"Machine: {mc['cpu_model']}, {mc['cpus']} CPUs, {mc['mem_gib']} GiB ({'VM' if mc['hypervisor'] else 'bare metal'}); "
           f"onelog {data['onelog'].get('version', '?')} at {mc['git']}; {mc['mariadb']}.",
           f"sysbench, {cfg['p_tables']} tables, {cfg['p_threads']} threads, {cfg['p_seconds']} s per test, "
           f"cache (`innodb_buffer_pool_size`) {cfg['p_cache']}, fsync latency {cfg['p_latency_us']} us injected "
           "into every server; MariaDB with binlog, sync_binlog=1, innodb_flush_log_at_trx_commit=1. "
           "TPS (load: seconds of `prepare`), and the server's RSS in MiB (peak / mean during the test).", ""]
    for size in ("larger", "fits"):
        sel = [c for c in cells if c["size"] == size]
        if not sel:
            continue
        rows = sel[0]["rows"] * cfg["p_tables"]
        out += [f"**{size}**: {rows:,} rows", "",
                "| system | load s (RSS peak) | " + " | ".join(f"{t} TPS (RSS peak / mean)" for t in TESTS)
                + " | store MiB on disk at stop | after a restart | bytes/row (after a restart) |",
                "|---" * (5 + len(TESTS)) + "|"]
        for c in sel:
            if c.get("na"):
                out.append(f"| {c['label']} | n/a: {c['na'][:120]} |" + " |" * (4 + len(TESTS)))
                continue
            tests = []
            for t in TESTS:
                r = c["tests"].get(t, {})
                tests.append(f"{r.get('tps', 0):,.0f} ({mib(r.get('rss_peak'))} / {mib(r.get('rss_mean'))})")
            out.append(f"| {c['label']} | {c['load_s']:.1f} ({mib(c['load']['rss_peak'])}) | " + " | ".join(tests)
                       + f" | {mib(c.get('store_bytes_at_stop', c['store_bytes']))} | {mib(c['store_bytes'])}"
                       f" | {c['bytes_per_row']:.0f} |")
        by = {c["system"]: c for c in sel if not c.get("na")}
        ratios = []
        for other in ("mariadb", "onelog-memory"):
            if "onelog-paged" in by and other in by:
                a, b = by["onelog-paged"], by[other]
                parts = [f"load time {B.fmt(a['load_s'] / b['load_s'])}"] + [
                    f"{t} {B.fmt(a['tests'][t].get('tps', 0) / b['tests'][t]['tps'])}"
                    for t in TESTS if b["tests"].get(t, {}).get("tps")]
                if b["bytes_per_row"]:
                    parts.append(f"bytes/row {B.fmt(a['bytes_per_row'] / b['bytes_per_row'])}")
                ratios.append(f"onelog paged / {by[other]['label']} (TPS; load time and bytes/row: "
                              "below 1 is better): " + ", ".join(parts))
        out += [""] + [f"- {r}" for r in ratios] + [""]
    out += side_by_side_table(data.get("paged_side_by_side"), cfg)
    return "\n".join(out)


def write_report(data, repo, results_path, docs=None):
    import report  # bench/lib/report.py
    report.write_part("paged", "Data larger than memory: the paged store vs MariaDB 10.11 (issue 17 part 5)",
                      tables(data), repo, results_path, docs)
