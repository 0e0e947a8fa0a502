"""bench/lib/report.py — turns bench/run's results (the JSON bench.py writes) into the generated
section of docs/BENCHMARKS.md and the PNG plots in docs/bench/.

Invariants: only the text between BEGIN_MARK and END_MARK (appended at the end the first time)
and the short intro paragraph after the page title (marked INTRO_MARK, inserted once) are
written; every other section of docs/BENCHMARKS.md is kept byte for byte. Every verdict is
computed from the numbers in the results; a missing number gives "n/a", never "met".
"""

import os
import statistics

BEGIN_MARK = "<!-- BEGIN bench/run generated section: written by bench/lib/report.py, do not edit by hand -->"
END_MARK = "<!-- END bench/run generated section -->"
INTRO_MARK = "<!-- bench/run intro -->"
INTRO = f"""{INTRO_MARK}
**Regenerate the onelog vs MariaDB 10.11 measurements with one command:** `bench/run` (the full
matrix: hours) or `bench/run --quick` (a subset: under 10 minutes on 2 cores). It builds onelog
(`cargo build --release -p onelog`, or takes `ONELOG_BIN`), measures the sysbench matrix, rotation
stalls, one large transaction and kill -9 recovery against onelog and MariaDB on this machine,
and rewrites the section "Durability, fsyncs and log bytes: onelog vs MariaDB 10.11 (issue 5)" at
the end of this page and the plots in `docs/bench/`. Details: `bench/README.md`.
"""

SYSTEM_ORDER = ["onelog-engine", "onelog-file", "onelog-mirror", "mariadb-binlog", "mariadb-nobinlog"]
LABEL = {"onelog-engine": "onelog engine", "onelog-file": "onelog file",
         "onelog-mirror": "onelog engine+mirror", "mariadb-binlog": "MariaDB binlog",
         "mariadb-nobinlog": "MariaDB no binlog"}
DUR_TEXT = {"D1": "D1 (innodb_flush_log_at_trx_commit=1, sync_binlog=1)",
            "D2": "D2 (innodb_flush_log_at_trx_commit=2, sync_binlog=0)",
            "D3": "D3 (innodb_flush_log_at_trx_commit=0, sync_binlog=0)"}


def f(v, d=2):
    if v is None:
        return "n/a"
    if d == 0:
        return f"{v:,.0f}".replace(",", " ")
    return f"{v:.{d}f}"


def lat_text(us):
    return "0 ms (real disk)" if us == 0 else f"{us / 1000:g} ms"


class Matrix:
    def __init__(self, data):
        runs = {}
        for c in data.get("matrix", []):
            runs.setdefault((c["system"], c["durability"], c["latency_us"], c["workload"], c["threads"]), []).append(c)
        # One cell per key: the per-field median over repeated runs (BENCH_RUNS).
        self.cells = {}
        for k, cs in runs.items():
            cell = dict(cs[-1])
            for fld, v in cs[-1].items():
                if isinstance(v, (int, float)) and not isinstance(v, bool) and fld not in ("threads", "latency_us", "run"):
                    vals = [c.get(fld) for c in cs if isinstance(c.get(fld), (int, float))]
                    cell[fld] = statistics.median(vals) if vals else None
            sd = {}
            for c in cs:
                for sk, sv in (c.get("status_deltas") or {}).items():
                    sd.setdefault(sk, []).append(sv)
            cell["status_deltas"] = {sk: statistics.median(v) for sk, v in sd.items()}
            cell["runs"] = len(cs)
            self.cells[k] = cell
        self.na = data.get("na", {})
        cfg = data["config"]
        self.cfg = cfg

    def get(self, system, dur, lat, w, t, key):
        c = self.cells.get((system, dur, lat, w, t))
        return None if c is None else c.get(key)

    def why(self, system, dur, lat):
        return self.na.get(f"{system}/{dur}/{lat}")


def ratio(a, b):
    return a / b if a is not None and b else None


def goals(data, m):
    cfg = m.cfg
    rows = []
    lat = 1000
    # 1. throughput at 1 ms
    parts, ok = [], []
    for w in cfg["workloads"]:
        for t, need in ((1, 2.0), (8, 2.0), (32, 1.5)):
            if t not in cfg["threads"]:
                continue
            r = ratio(m.get("onelog-engine", "D1", lat, w, t, "tps"), m.get("mariadb-binlog", "D1", lat, w, t, "tps"))
            parts.append(f"{w} {t} thr: {f(r)}{'×' if r is not None else ''} (need {need:g}×)")
            ok.append(None if r is None else r >= need)
    rows.append(("onelog engine D1 TPS ≥ 2× MariaDB D1 at 1 and 8 threads, ≥ 1.5× at 32 (1 ms injected fsync latency)",
                 "; ".join(parts) or "n/a", verdict(ok)))
    # 2. fsyncs per transaction: at most one, and about half of file mode's
    parts, ok, parts2, ok2 = [], [], [], []
    for w in cfg["workloads"]:
        for t in cfg["threads"]:
            e = m.get("onelog-engine", "D1", lat, w, t, "fsyncs_per_txn")
            fl = m.get("onelog-file", "D1", lat, w, t, "fsyncs_per_txn")
            r = ratio(e, fl)
            parts.append(f"{w} {t} thr: {f(e, 3)}")
            ok.append(None if e is None else e <= 1.0)
            parts2.append(f"{w} {t} thr: {f(e, 3)} vs {f(fl, 3)}" + (f" = {f(r)}×" if r is not None else ""))
            ok2.append(None if r is None else r <= 0.6)
    rows.append(("onelog engine D1 fsyncs/txn ≤ 1.0 (1 ms)", "; ".join(parts) or "n/a", verdict(ok)))
    rows.append(("onelog engine D1 fsyncs/txn about half of onelog file D1 (counted as ≤ 0.6×; 1 ms)",
                 "; ".join(parts2) or "n/a", verdict(ok2)))
    # 3. log bytes per binlog byte
    eng = next((x for x in data.get("large", []) if x["system"] == "onelog-engine"), None)
    r = eng.get("engine_per_binlog") if eng else None
    rows.append(("onelog engine log bytes per binlog byte ≤ 1.2 (one transaction updating "
                 f"{f(eng.get('rows') if eng else None, 0)} rows)",
                 f"{f(r, 3)}" + (f" ({eng['na']})" if eng and eng.get("na") else ""),
                 verdict([None if r is None else r <= 1.2])))
    # 4. rotation stalls
    rot = next((x for x in data.get("rotation", []) if x["system"] == "onelog-engine"), None)
    r = rot.get("worst_over_median") if rot else None
    txt = "n/a" if r is None else (f"worst second {f(rot['worst_tps'], 0)} tps = {f(r)}× the median "
                                   f"{f(rot['median_tps'], 0)} over {rot['rotations']} rotations")
    rows.append(("no second below 50% of the median across rotations (onelog engine)", txt,
                 verdict([None if r is None else (r >= 0.5 and (rot.get("rotations") or 0) >= 2)])))
    return rows


def verdict(oks):
    if not oks or any(o is None for o in oks):
        known = [o for o in oks if o is not None]
        if known and not all(known):
            return "**not met** (some cells n/a)"
        return "n/a (not measured)"
    return "**met**" if all(oks) else "**not met**"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"]
    out += ["| " + " | ".join(str(x) for x in r) + " |" for r in rows]
    return "\n".join(out)


def headline(m):
    """Seed 001's table: MariaDB binlog D1 vs onelog engine D1, TPS, speedup and p99."""
    cfg = m.cfg
    out = []
    for lat in [x for x in cfg["latencies_us"] if x == 1000] or cfg["latencies_us"][-1:]:
        for w in cfg["workloads"]:
            rows = []
            for t in cfg["threads"]:
                a = m.get("mariadb-binlog", "D1", lat, w, t, "tps")
                b = m.get("onelog-engine", "D1", lat, w, t, "tps")
                fl = m.get("onelog-file", "D1", lat, w, t, "tps")
                rows.append([t, f(a, 0), f(b, 0), f(ratio(b, a)) + ("×" if ratio(b, a) else ""),
                             f(fl, 0), f(m.get("mariadb-binlog", "D1", lat, w, t, "p99")),
                             f(m.get("onelog-engine", "D1", lat, w, t, "p99"))])
            out.append(f"Headline, {w} at D1 with {lat_text(lat)} injected fsync latency (seed 001's table):\n")
            out.append(table(["threads", "MariaDB binlog TPS", "onelog engine TPS", "speedup", "onelog file TPS",
                              "MariaDB p99 ms", "onelog engine p99 ms"], rows) + "\n")
    return out


SERVER_FSYNC_KEYS = [("Onelog_engine_log_fsyncs", "engine log"), ("Onelog_log_fsyncs", "log"),
                     ("Onelog_binlog_file_fsyncs", "binlog files"), ("Onelog_mirror_fsyncs", "mirror"),
                     ("Innodb_os_log_fsyncs", "redo"), ("Innodb_data_fsyncs", "InnoDB redo+data")]


def fsync_breakdown(m):
    """Where the syncs went, from the servers' own counters (per transaction), D1."""
    cfg = m.cfg
    lat = 1000 if 1000 in cfg["latencies_us"] else cfg["latencies_us"][-1]
    if "D1" not in cfg["durability"]:
        return []
    rows = []
    for w in cfg["workloads"]:
        for t in cfg["threads"]:
            row = [w, t]
            for s in SYSTEM_ORDER:
                if s not in cfg["systems"]:
                    continue
                c = m.cells.get((s, "D1", lat, w, t))
                if not c or not c.get("txns"):
                    row.append("n/a")
                    continue
                sd = c.get("status_deltas") or {}
                parts = []
                for k, name in SERVER_FSYNC_KEYS:
                    if k == "Onelog_log_fsyncs" and "Onelog_engine_log_fsyncs" in sd:
                        continue
                    if k in sd:
                        parts.append(f"{name} {sd[k] / c['txns']:.3f}")
                row.append(f"{f(c.get('fsyncs_per_txn'), 3)} ({', '.join(parts)})" if parts else f(c.get("fsyncs_per_txn"), 3))
            rows.append(row)
    hdr = ["workload", "threads"] + [LABEL[s] for s in SYSTEM_ORDER if s in cfg["systems"]]
    return [f"Where the syncs go, D1 at {lat_text(lat)}: counted syncs/txn (the server's own counters per txn):\n",
            table(hdr, rows) + "\n"]


def matrix_sections(data, m, plots):
    cfg = m.cfg
    out = []
    systems = [s for s in SYSTEM_ORDER if s in cfg["systems"]]
    for lat in cfg["latencies_us"]:
        for w in cfg["workloads"]:
            out.append(f"#### {w}, injected fsync latency {lat_text(lat)}\n")
            # TPS with ratio to MariaDB D1
            hdr = ["durability", "threads"] + [f"{LABEL[s]} TPS (×MariaDB D1)" for s in systems]
            rows = []
            for dur in cfg["durability"]:
                for t in cfg["threads"]:
                    base = m.get("mariadb-binlog", "D1", lat, w, t, "tps")
                    row = [dur, t]
                    for s in systems:
                        v = m.get(s, dur, lat, w, t, "tps")
                        err = m.get(s, dur, lat, w, t, "errors")
                        rr = ratio(v, base)
                        row.append("n/a" if v is None else f(v, 0) + (f" ({f(rr)}×)" if rr is not None else "")
                                   + (f" [{err:g} errors]" if err else ""))
                    rows.append(row)
            out.append(table(hdr, rows) + "\n")
            hdr = ["durability", "threads"] + [f"{LABEL[s]} p95 / p99 ms" for s in systems]
            rows = []
            for dur in cfg["durability"]:
                for t in cfg["threads"]:
                    row = [dur, t]
                    for s in systems:
                        p95, p99 = m.get(s, dur, lat, w, t, "p95"), m.get(s, dur, lat, w, t, "p99")
                        row.append("n/a" if p99 is None else f"{f(p95)} / {f(p99)}")
                    rows.append(row)
            out.append(table(hdr, rows) + "\n")
            hdr = ["durability", "threads"] + [f"{LABEL[s]} fsyncs/txn · log B/txn" for s in systems]
            rows = []
            for dur in cfg["durability"]:
                for t in cfg["threads"]:
                    row = [dur, t]
                    for s in systems:
                        fs = m.get(s, dur, lat, w, t, "fsyncs_per_txn")
                        lb = m.get(s, dur, lat, w, t, "log_bytes_per_txn")
                        row.append("n/a" if fs is None and lb is None else f"{f(fs, 3)} · {f(lb, 0)}")
                    rows.append(row)
            out.append(table(hdr, rows) + "\n")
            if plots.get((w, lat)):
                out.append(f"![{w}, {lat_text(lat)}: TPS and p99 vs threads](bench/{plots[(w, lat)]})\n")
    nas = [f"- {k.replace('/', ' ', 1).replace('/', ' latency ', 1)} µs: {v}" for k, v in sorted(m.na.items())]
    if nas:
        out.append("Systems not measured (n/a in the tables):\n\n" + "\n".join(nas) + "\n")
    return out


def make_plots(data, m, outdir):
    """PNG plots; returns ({(workload, latency): file}, rotation file or None, note)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return {}, None, ("Plots skipped: matplotlib is not installed for this Python "
                          "(`apt-get install python3-matplotlib`, then `bench/run --report-only`).")
    os.makedirs(outdir, exist_ok=True)
    cfg = m.cfg
    files = {}
    styles = {"D1": "-", "D2": "--", "D3": ":"}
    colors = {"onelog-engine": "tab:blue", "onelog-file": "tab:orange", "onelog-mirror": "tab:green",
              "mariadb-binlog": "tab:red", "mariadb-nobinlog": "tab:purple"}
    for lat in cfg["latencies_us"]:
        for w in cfg["workloads"]:
            fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.2))
            any_line = False
            for s in SYSTEM_ORDER:
                for dur in cfg["durability"]:
                    xs, tps, p99 = [], [], []
                    for t in cfg["threads"]:
                        v, p = m.get(s, dur, lat, w, t, "tps"), m.get(s, dur, lat, w, t, "p99")
                        if v is not None:
                            xs.append(t)
                            tps.append(v)
                            p99.append(p)
                    if not xs:
                        continue
                    any_line = True
                    lbl = f"{LABEL[s]} {dur}"
                    a1.plot(xs, tps, styles[dur], marker="o", color=colors[s], label=lbl)
                    a2.plot(xs, p99, styles[dur], marker="o", color=colors[s], label=lbl)
            if not any_line:
                plt.close(fig)
                continue
            for a, yl in ((a1, "transactions/s"), (a2, "p99 latency (ms)")):
                a.set_xscale("log", base=2)
                a.set_xticks(cfg["threads"])
                a.set_xticklabels([str(t) for t in cfg["threads"]])
                a.set_xlabel("sysbench threads")
                a.set_ylabel(yl)
                a.grid(True, alpha=0.3)
            a2.set_ylim(bottom=0)
            a1.legend(fontsize=7)
            fig.suptitle(f"{w}, injected fsync latency {lat_text(lat)} ({cfg['mode']} run)")
            fig.tight_layout()
            name = f"{w}_{lat}us.png"
            fig.savefig(os.path.join(outdir, name), dpi=90)
            plt.close(fig)
            files[(w, lat)] = name
    rot_file = None
    rot = [r for r in data.get("rotation", []) if r.get("per_second")]
    if rot:
        fig, ax = plt.subplots(figsize=(11, 4))
        for r in rot:
            ax.plot(range(1, len(r["per_second"]) + 1), r["per_second"], marker=".", label=r["label"])
        ax.set_xlabel("second")
        ax.set_ylabel("transactions/s")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        ax.set_title(f"oltp_write_only per second, max_binlog_size={rot[0]['max_binlog_size']} ({cfg['mode']} run)")
        fig.tight_layout()
        rot_file = "rotation.png"
        fig.savefig(os.path.join(outdir, rot_file), dpi=90)
        plt.close(fig)
    return files, rot_file, None


def section(data, plots, rot_file, plot_note, results_rel):
    cfg = data["config"]
    m = Matrix(data)
    mc = data["machine"]
    sc = data.get("selfcheck", {})
    quick = cfg["mode"] == "quick"
    out = [BEGIN_MARK, "## Durability, fsyncs and log bytes: onelog vs MariaDB 10.11 (issue 5)", ""]
    cmd = "bench/run --quick" if quick else "bench/run"
    out.append(f"Generated by `{cmd}` on {data['generated']} (measuring took {data.get('elapsed_s', '?')} s); "
               f"raw numbers: `{results_rel}`.")
    if quick:
        out.append(f"**Quick mode**: {cfg['tables']} tables × {cfg['table_size']} rows, {cfg['seconds']} s per cell, "
                   f"{cfg.get('runs', 1)} run(s) per cell: a smoke test of the harness whose numbers are indicative only; the "
                   "full matrix is `bench/run`.")
    out.append("")
    out.append("### Machine\n")
    out.append(f"- CPU: {mc['cpu_model']}, {mc['cpus']} CPUs ({mc['cores_per_socket']} cores per socket, "
               f"{mc['threads_per_core']} threads per core); memory {mc['mem_gib']} GiB")
    out.append(f"- disk: {mc['disk']}; kernel {mc['kernel']}")
    out.append(f"- load average before the run: {' '.join(mc['loadavg_before'])}; after: "
               f"{' '.join(data.get('loadavg_after', ['?']))}")
    out.append(f"- {mc['mariadb']}; {mc['sysbench']}; {data['onelog'].get('version', 'onelog ?')} "
               f"(source: {mc.get('git', '?')}); {mc['gcc']}")
    out.append("")
    out.append("### Method\n")
    warm = (f" and a {cfg['cell_warmup']} s warm-up of the same workload before each cell"
            if cfg["cell_warmup"] else "")
    out.append(f"""- Systems: **onelog engine** (the log is the binlog), **onelog file** (`--binlog-storage=file
  --sync-binlog=N`: classic binlog files with two-phase commit), **onelog engine+mirror**
  (`--binlog-file-mirror=ON`), **MariaDB binlog** (10.11, `log_bin`, ROW, its file binlog) and
  **MariaDB no binlog**. One server at a time, temporary data directory, loopback TCP; MariaDB
  with a 2G buffer pool (holds the data) and a 256M redo log, default `innodb_flush_method`.
- Durability: {'; '.join(DUR_TEXT[d] for d in cfg['durability'])}. onelog engine has no sync_binlog
  (its log is the binlog); MariaDB without binlog ignores sync_binlog.
- Injected fsync latency: `bench/fsync_delay/fsync_delay.c`, preloaded (LD_PRELOAD) into the server,
  sleeps the given time after every fsync, fdatasync, syncfs, sync_file_range(WAIT_AFTER) and write on an
  O_DSYNC/O_SYNC descriptor, and counts each kind in a shared-memory file read before and after each
  measured run. Self-check this run: 10 fdatasyncs counted {sc.get('counts', {}).get('fdatasync', '?')},
  18 delayed calls at {sc.get('delay_us', '?')} µs took {sc.get('elapsed_us', '?')} µs (mean actual sleep
  {sc.get('mean_slept_us', '?')} µs: sleeps overshoot on a loaded VM).
- sysbench {', '.join(cfg['workloads'])}; threads {', '.join(map(str, cfg['threads']))};
  `--rand-type=uniform --rand-seed={cfg['seed']}`; data re-created (`prepare`, {cfg['tables']} tables ×
  {cfg['table_size']} rows) for every system × durability × latency profile, then a
  {cfg['profile_warmup']} s `oltp_read_write` warm-up{warm}; {cfg['seconds']} s per measured cell,
  {cfg.get('runs', 1)} run(s) per cell (medians when more than one). onelog segment size / MariaDB `max_binlog_size`: {cfg['segment_size']}.
- Per cell: TPS; p99 as sysbench reports it (`--percentile=99`), p95 from its latency histogram (`--histogram=on`);
  **fsyncs/txn** = all sync calls the library counted in the server during the run / transactions
  (includes background syncs: checkpoints, page flushing, segment preallocation);
  **log B/txn** = (engine log bytes: onelog `Onelog_end_lsn` delta, MariaDB `Innodb_os_log_written` delta)
  + (classic binlog file bytes: growth of the `binlog.NNNNNN` / `mariadb-bin.NNNNNN` files) / transactions.
- Ratios (×MariaDB D1) are against MariaDB binlog at D1 in the same workload, thread count and latency,
  as in the seeds' tables.
""")
    prof = data.get("profiles", {})
    if prof:
        seen, lines = set(), []
        for key, v in prof.items():
            system, dur, _lat = key.split("/")
            if (system, dur) in seen:
                continue
            seen.add((system, dur))
            kv = ", ".join(f"{k}={x}" for k, x in v.items() if k != "version")
            lines.append(f"- {LABEL.get(system, system)} {dur}: {kv}")
        out.append("Settings as the running servers reported them (`SELECT @@global.…`):\n")
        out.append("\n".join(lines) + "\n")
    out.append("### Goals (issue 5, item 5)\n")
    out.append(table(["goal", "measured", "verdict"], goals(data, m)) + "\n")
    out.append("### sysbench matrix\n")
    out += headline(m)
    out += fsync_breakdown(m)
    for wmsg in data.get("warnings", []):
        out.append(f"**Warning:** {wmsg}\n")
    if plot_note:
        out.append(plot_note + "\n")
    out += matrix_sections(data, m, plots)
    # rotation
    out.append("### Rotation stalls\n")
    rot = data.get("rotation", [])
    if rot:
        r0 = rot[0]
        out.append(f"oltp_write_only, {r0['threads']} threads, {r0['seconds']} s with `--report-interval=1`, "
                   f"max_binlog_size={r0['max_binlog_size']} (onelog: segment size; file mode: classic file size), "
                   f"innodb_flush_log_at_trx_commit=1, injected latency {lat_text(r0['latency_us'])}. The first "
                   "second (ramp-up) is left out of median and worst. Seed 002: with sync_binlog=0 the rotation's "
                   "sync of a big dirty file stalls commits; onelog engine rotates by switching to a "
                   "preallocated segment.\n")
        rows = []
        for r in rot:
            if r.get("na"):
                rows.append([r["label"], "n/a", "n/a", "n/a", "n/a", "n/a", "n/a", r["na"][:120]])
            else:
                rows.append([r["label"], f(r.get("tps"), 0), f(r.get("median_tps"), 0), f(r.get("worst_tps"), 0),
                             f(r.get("worst_over_median")), f(r.get("worst_second_p99")), r.get("rotations"),
                             "≥ 50%: yes" if (r.get("worst_over_median") or 0) >= 0.5 else "≥ 50%: **no**"])
        out.append(table(["system", "mean TPS", "median second", "worst second", "worst/median",
                          "worst 1-s p99 ms", "rotations", ""], rows) + "\n")
        if rot_file:
            out.append(f"![per-second TPS across rotations](bench/{rot_file})\n")
    else:
        out.append("not run\n")
    # large transaction
    out.append("### One large transaction\n")
    lg = data.get("large", [])
    if lg:
        out.append(f"`BEGIN; UPDATE sbtest1 SET k=k+1; COMMIT` on a {f(lg[0]['rows'], 0)}-row sysbench table, "
                   "durability D1, real disk. Binlog bytes: the transaction's events (SHOW BINLOG EVENTS, "
                   "End_log_pos − Pos); engine log / redo: `Onelog_end_lsn` / `Innodb_os_log_written` delta; "
                   "binlog files: growth of classic binlog files. Seed 001 measured redo amplification 1.03× "
                   "(FILE) vs 1.98× (binlog in InnoDB).\n")
        rows = []
        for r in lg:
            if r.get("na"):
                rows.append([r["label"]] + ["n/a"] * 7 + [r["na"][:120]])
            else:
                rows.append([r["label"], f(r.get("update_s"), 2), f(r.get("commit_s") * 1000 if r.get("commit_s") is not None else None, 1),
                             f(r.get("binlog_event_bytes"), 0), f(r.get("engine_log_bytes"), 0),
                             f(r.get("binlog_file_bytes"), 0), f(r.get("engine_per_binlog"), 3),
                             f(r.get("all_logs_per_binlog"), 3), ""])
        out.append(table(["system", "UPDATE s", "COMMIT ms", "binlog event B", "engine log / redo B",
                          "binlog file B", "engine log or redo per binlog B", "all log bytes per binlog B", ""], rows) + "\n")
    else:
        out.append("not run\n")
    # crash
    out.append("### Crash recovery (kill -9 under load)\n")
    cr = data.get("crash", [])
    if cr:
        c0 = cr[0]
        out.append(f"D1. `sysbench oltp_write_only` with {c0['sysbench_threads']} threads plus {c0['writers']} "
                   f"clients inserting numbered rows one autocommit INSERT at a time (a row counts as acknowledged "
                   f"once the client got the OK); `kill -9` of the server after {c0['load_seconds']} s, restart on "
                   "the same data directory, time from spawn until a query succeeds, then every acknowledged row "
                   "looked up. (kill -9 loses no page cache: this checks the commit protocol, not power loss.)\n")
        rows = []
        for r in cr:
            if r.get("na"):
                rows.append([r["label"], "n/a", "n/a", "n/a", "n/a", r["na"][:120]])
            else:
                rows.append([r["label"], f(r.get("restart_to_ready_s"), 2), r.get("acked"), r.get("present"),
                             f"**{r.get('lost')}**", ""])
        out.append(table(["system", "restart → ready s", "acknowledged rows", "rows after restart", "acknowledged rows lost", ""], rows) + "\n")
    else:
        out.append("not run\n")
    out.append("### Not measured here\n")
    out.append("""- Repetitions: `BENCH_RUNS` (default 1) runs per cell; with one run there are no medians: on a shared or small machine compare ratios
  measured within one run, not absolute numbers across runs.
- The injected latency is a sleep after the real sync: it models a slow device's sync latency,
  not its bandwidth or queueing; sleeps overshoot under load (mean actual sleep in the JSON,
  `mean_delay_us`). InnoDB's data-page writes through io_uring/libaio are not delayed (their syncs are).
- kill -9 keeps the page cache: the crash test checks the commit protocol and recovery time, not
  power loss (the crash simulations in `crates/engine/tests` cover torn writes and lost syncs).
- Not reproduced from the seeds: replication lag with a replica (seed 001), ext4 vs XFS and
  sync_binlog=1000/10000 (seed 002), MariaDB 12.3's binlog_storage_engine=innodb itself (seeds 000,
  001: onelog engine mode plays that role here).
""")
    out.append(END_MARK)
    return "\n".join(out) + "\n"


def write(data, repo, results_path, docs=None):
    docs = docs or os.path.join(repo, "docs")
    plots, rot_file, note = make_plots(data, Matrix(data), os.path.join(docs, "bench"))
    rel = os.path.relpath(results_path, repo)
    text = section(data, plots, rot_file, note, rel)
    path = os.path.join(docs, "BENCHMARKS.md")
    try:
        with open(path) as fh:
            page = fh.read()
    except FileNotFoundError:
        page = "# onelog benchmarks\n"
    if INTRO_MARK not in page:
        lines = page.split("\n")
        # after the title and its first paragraph
        i = 1
        while i < len(lines) and not lines[i].strip():
            i += 1
        while i < len(lines) and lines[i].strip():
            i += 1
        lines[i:i] = ["", INTRO.rstrip("\n")]
        page = "\n".join(lines)
    if BEGIN_MARK in page and END_MARK in page:
        a = page.index(BEGIN_MARK)
        b = page.index(END_MARK) + len(END_MARK)
        page = page[:a] + text.rstrip("\n") + page[b:]
    else:
        page = page.rstrip("\n") + "\n\n" + text
    with open(path, "w") as fh:
        fh.write(page)
    print(f"bench/run: wrote {path} and {len(plots) + (1 if rot_file else 0)} plots in docs/bench/")


# ----------------------------------------------------------------------------- replication (issue 11)

REPL_BEGIN = "<!-- BEGIN bench/run --replication generated section: written by bench/lib/report.py, do not edit by hand -->"
REPL_END = "<!-- END bench/run --replication generated section -->"
REPL_LABEL = {"onelog-engine": "onelog", "mariadb-binlog": "MariaDB 10.11"}


def write_part(part, title, body, repo, results_path, docs=None):
    """Writes the section of `bench/run --<part>` (bench/lib/<part>.py) in docs/BENCHMARKS.md:
    its title, where its raw numbers are, then body."""
    docs = docs or os.path.join(repo, "docs")
    rel = os.path.relpath(results_path, repo)
    begin = (f"<!-- BEGIN bench/run --{part} generated section: written by bench/lib/{part}.py, "
             "do not edit by hand -->")
    end = f"<!-- END bench/run --{part} generated section -->"
    text = "\n".join([f"## {title}", "", f"`bench/run --{part}` (raw numbers: `{rel}`).", "", body])
    replace_section(os.path.join(docs, "BENCHMARKS.md"), begin, end, text, "onelog benchmarks")
    print(f"bench/run: wrote the {part} section of {docs}/BENCHMARKS.md")


def replace_section(path, begin, end, text, title):
    """Writes text between begin and end in the page at path (appended the first time); the rest
    of the page is kept byte for byte."""
    try:
        with open(path) as fh:
            page = fh.read()
    except FileNotFoundError:
        page = f"# {title}\n"
    text = text.rstrip("\n")
    if begin in page and end in page:
        a, b = page.index(begin), page.index(end) + len(end)
        page = page[:a] + begin + "\n" + text + "\n" + end + page[b:]
    else:
        page = page.rstrip("\n") + "\n\n" + begin + "\n" + text + "\n" + end + "\n"
    with open(path, "w") as fh:
        fh.write(page)


class Repl:
    """The replication cells by (primary, mode, replicas, threads); a void cell counts as n/a."""

    def __init__(self, data):
        self.cfg = data["config"]
        self.cells = {(c["primary"], c["mode"], c["replicas"], c["threads"]): c for c in data.get("replication", [])}

    def cell(self, p, mode, n, t):
        return self.cells.get((p, mode, n, t))

    def get(self, p, mode, n, t, key):
        c = self.cell(p, mode, n, t)
        if c is None or c.get("na") or c.get("void"):
            return None
        return c.get(key)

    def note(self, p, mode, n, t):
        c = self.cell(p, mode, n, t)
        if c is None:
            return "not run"
        if c.get("na"):
            return "n/a: " + c["na"].replace("\n", " ").replace("|", "/")[:200]
        if c.get("void"):
            return "**void**: " + c["void"].replace("\n", " ").replace("|", "/")[:200]
        extra = []
        if c.get("c2r_quarter_p50"):
            extra.append("c→r p50 per quarter " + "/".join(f(x, 0) for x in c["c2r_quarter_p50"]) + " ms")
        if c.get("catchup_s") is not None:
            extra.append(f"replicas caught up {f(c['catchup_s'], 1)} s after sysbench ended, rows equal")
        if c.get("semi_sync"):
            extra.append(f"semi-sync yes_tx {c['semi_sync'].get('Rpl_semi_sync_master_yes_tx')}, "
                         f"no_tx {c['semi_sync'].get('Rpl_semi_sync_master_no_tx')}")
        if c.get("semi_sync_unverified"):
            extra.append(c["semi_sync_unverified"])
        return "; ".join(extra)


def repl_goals(r):
    cfg = r.cfg
    rows = []
    n_max = max(cfg["repl_replicas"]) if cfg["repl_replicas"] else None
    for p in cfg["repl_primaries"] if n_max else []:
        parts, ok = [], []
        for t in cfg["repl_threads"]:
            x = ratio(r.get(p, "async", n_max, t, "tps"), r.get(p, "async", 0, t, "tps"))
            parts.append(f"{t} thr: {f(x)}" + ("×" if x is not None else ""))
            ok.append(None if x is None else x >= 0.95)
        rows.append((f"{REPL_LABEL.get(p, p)} primary: {n_max} replicas cost ≤ 5% TPS (≥ 0.95× of 0 replicas)",
                     "; ".join(parts) or "n/a", verdict(ok)))
    parts, ok = [], []
    for t in cfg["repl_threads"]:
        x = ratio(r.get("onelog-engine", "AFTER_SYNC", 1, t, "tps"), r.get("mariadb-binlog", "AFTER_SYNC", 1, t, "tps"))
        parts.append(f"{t} thr: {f(x)}" + ("×" if x is not None else ""))
        ok.append(None if x is None else x >= 2.0)
    rows.append(("onelog with an AFTER_SYNC replica ≥ 2× MariaDB with an AFTER_SYNC replica", "; ".join(parts) or "n/a",
                 verdict(ok)))
    return rows


def replication_tables(data, machine=True):
    """The two result tables and the goals (printed by bench/run --replication, and in the docs)."""
    r = Repl(data)
    cfg = r.cfg
    mc = data["machine"]
    out = [f"Machine: {mc['cpu_model']}, {mc['cpus']} CPUs, {mc['mem_gib']} GiB, {mc['disk']}; "
           f"{cfg['mode']} mode, {cfg['repl_seconds']} s per cell, injected fsync latency "
           f"{lat_text(cfg['repl_latency_us'])} (primary only).\n"] if machine else []
    out.append("#### Asynchronous replicas\n")
    rows = []
    for p in cfg["repl_primaries"]:
        for n in cfg["repl_replicas"]:
            for t in cfg["repl_threads"]:
                g = lambda k: r.get(p, "async", n, t, k)  # noqa: E731
                rows.append([f"{REPL_LABEL.get(p, p)}", n, t, f(g("tps"), 0), f(g("p99")), f(g("c2r_p50"), 1),
                             f(g("c2r_p99"), 1), f(ratio(g("tps"), r.get(p, "async", 0, t, "tps"))),
                             f(g("fsyncs_per_txn"), 3), r.note(p, "async", n, t)])
    out.append(table(["primary", "replicas", "threads", "primary TPS", "p99 ms", "commit→replica p50 ms",
                      "commit→replica p99 ms", "TPS vs 0 replicas", "primary fsyncs/txn", ""], rows) + "\n")
    out.append("#### One semi-sync replica: onelog vs MariaDB 10.11\n")
    rows = []
    for mode in cfg["repl_semisync"]:
        for t in cfg["repl_threads"]:
            o = lambda k: r.get("onelog-engine", mode, 1, t, k)  # noqa: E731
            m = lambda k: r.get("mariadb-binlog", mode, 1, t, k)  # noqa: E731
            notes = [f"onelog: {r.note('onelog-engine', mode, 1, t)}", f"MariaDB: {r.note('mariadb-binlog', mode, 1, t)}"]
            rows.append([mode, t, f(o("tps"), 0), f(o("p99")), f(o("c2r_p50"), 1), f(o("c2r_p99"), 1),
                         f(m("tps"), 0), f(m("p99")), f(m("c2r_p50"), 1), f(m("c2r_p99"), 1),
                         f(ratio(o("tps"), m("tps"))) + ("×" if ratio(o("tps"), m("tps")) else ""),
                         "; ".join(x for x in notes if not x.endswith(": "))])
    out.append(table(["wait point", "threads", "onelog TPS", "onelog p99 ms", "onelog c→r p50", "onelog c→r p99",
                      "MariaDB TPS", "MariaDB p99 ms", "MariaDB c→r p50", "MariaDB c→r p99", "onelog / MariaDB", ""],
                     rows) + "\n")
    out.append("#### Goals (issue 11)\n")
    out.append(table(["goal", "measured", "verdict"], repl_goals(r)) + "\n")
    return "\n".join(out)


def replication_method(data):
    cfg, mc = data["config"], data["machine"]
    quick = cfg["mode"] == "quick"
    cmd = "bench/run --replication --quick" if quick else "bench/run --replication"
    out = [f"Generated by `{cmd}` on {data['generated']} (measuring took {data.get('elapsed_s', '?')} s).",
           f"Machine: {mc['cpu_model']}, {mc['cpus']} CPUs, {mc['mem_gib']} GiB; disk {mc['disk']}; load average "
           f"before {' '.join(mc['loadavg_before'])}, after {' '.join(data.get('loadavg_after', ['?']))}; "
           f"{mc['mariadb']}; {data['onelog'].get('version', 'onelog ?')} (source {mc.get('git', '?')}).", ""]
    if quick:
        out += [f"**Quick mode**: {cfg['tables']} tables × {cfg['table_size']} rows, {cfg['repl_seconds']} s per cell, "
                "1 run: a smoke test of the harness whose numbers are indicative only (the primary, its replicas, "
                "sysbench and the probe share the machine's CPUs); the full run is `bench/run --replication`.", ""]
    pc, rc = cfg.get("repl_primary_cpus"), cfg.get("repl_replica_cpus")
    pins = (f"primary pinned to CPUs {pc or 'any'}, replicas to {rc or 'any'} (`taskset -c`)" if pc or rc
            else f"nothing pinned: all {mc['cpus']} CPUs shared by every process")
    out.append(f"""- sysbench `oltp_write_only`, threads {', '.join(map(str, cfg['repl_threads']))},
  `--rand-type=uniform --rand-seed={cfg['seed']}`, {cfg['tables']} tables × {cfg['table_size']} rows,
  {cfg['repl_seconds']} s per cell{f" after a {cfg['cell_warmup']} s warm-up" if cfg['cell_warmup'] else ""};
  every profile (primary × replica setup) starts from fresh servers, attaches the replicas, then
  `sysbench prepare` (replicated) and a {cfg['profile_warmup']} s warm-up.
- Primaries: **onelog** (`onelog serve`, engine mode: the log is the binlog,
  innodb_flush_log_at_trx_commit=1) and **MariaDB 10.11** (`--log-bin --binlog-format=ROW
  --sync-binlog=1 --innodb-flush-log-at-trx-commit=1`, utf8mb4). Injected fsync latency
  {lat_text(cfg['repl_latency_us'])} **in the primary only** (`bench/fsync_delay`, LD_PRELOAD); the
  replicas run on the real disk without it.
- Replicas: MariaDB 10.11 (`--skip-log-bin`, utf8mb4, innodb_flush_log_at_trx_commit=1,
  `slave_parallel_threads={cfg['repl_parallel_threads']}`, `slave_parallel_mode=optimistic`), attached with
  `CHANGE MASTER TO … MASTER_USE_GTID=slave_pos`. Semi-sync: primary `rpl_semi_sync_master_enabled=ON`,
  `rpl_semi_sync_master_wait_point` as shown, `rpl_semi_sync_master_timeout=60000`; replica
  `rpl_semi_sync_slave_enabled=ON` before `START SLAVE`. A primary that refuses these variables
  gets n/a with its error text.
- **commit→replica latency**: a probe client inserts a numbered row on the primary every
  {cfg['repl_probe_ms']} ms during the cell (autocommit) and notes when the OK arrives; another client polls the
  first replica's `MAX(id)` about every 2 ms (plus its round trip) and notes when each row becomes visible;
  latency = visible on the replica − acknowledged on the primary (one clock; can be slightly negative
  with semi-sync, where the replica may apply before the primary's OK reaches the client).
- After every cell each replica must reach the primary's `@@gtid_binlog_pos` (`MASTER_GTID_WAIT`,
  both replication threads running) and hold the same `COUNT(*)` and `SUM(k)` in every sysbench table
  and the probe table; otherwise the cell is **void** (listed, never counted). A semi-sync cell with
  `Rpl_semi_sync_master_no_tx` > 0 (fell back to async) is void too.
- CPUs: {pins}. When the primary, its replicas, sysbench and the probe share few
  CPUs, every replica applying the primary's transactions takes CPU time from the primary: the
  TPS cost of replicas then measures the machine, not the primary's replication overhead, and a
  replica that applies slower than the primary commits shows as a commit→replica latency that
  grows through the cell (the per-quarter medians) and a catch-up after it.
- TPS vs 0 replicas: the same primary and thread count without replicas, in the same run.
  "caught up N s after": from the end of the sysbench run until every replica had applied the
  primary's last transaction (a replica that applies slower than the primary commits lags by then).
""")
    return "\n".join(out)


def shared_cpus_note(data):
    cfg = data["config"]
    if cfg.get("repl_primary_cpus") or cfg.get("repl_replica_cpus"):
        return (f"Primary on CPUs {cfg.get('repl_primary_cpus') or 'any'}, replicas on "
                f"{cfg.get('repl_replica_cpus') or 'any'}.")
    return (f"Nothing was pinned: the primary, up to {max(cfg['repl_replicas'] or [0])} replicas, sysbench and the "
            f"probe shared {data['machine']['cpus']} CPUs, so the replicas' cost here is mostly CPU taken "
            "from the primary; on a bigger machine pin them apart (`BENCH_REPL_PRIMARY_CPUS`, "
            "`BENCH_REPL_REPLICA_CPUS`).")


def write_replication(data, repo, results_path, docs=None):
    docs = docs or os.path.join(repo, "docs")
    rel = os.path.relpath(results_path, repo)
    tables = replication_tables(data, machine=False)
    text = "\n".join(["## Replication: onelog vs MariaDB 10.11 as a primary (issue 11)", "",
                      replication_method(data), f"Raw numbers: `{rel}`.", "", tables])
    replace_section(os.path.join(docs, "BENCHMARKS.md"), REPL_BEGIN, REPL_END, text, "onelog benchmarks")
    goals_only = "\n".join(["## Measured: what replicas cost the primary", "",
                            f"From `bench/run --replication{' --quick' if data['config']['mode'] == 'quick' else ''}` "
                            f"({data['generated']}, {data['machine']['cpus']} CPUs; method and all numbers in "
                            "[BENCHMARKS.md](BENCHMARKS.md#replication-onelog-vs-mariadb-1011-as-a-primary-issue-11)):",
                            "", table(["goal", "measured", "verdict"], repl_goals(Repl(data))), "",
                            shared_cpus_note(data)])
    replace_section(os.path.join(docs, "REPLICATION.md"), REPL_BEGIN, REPL_END, goals_only, "Replication")
    print(f"bench/run: wrote the replication sections of {docs}/BENCHMARKS.md and {docs}/REPLICATION.md")


# ----------------------------------------------------------------------------- replica lag (issue 12)

LAG_BEGIN = "<!-- BEGIN bench/run --replica-lag generated section: written by bench/lib/report.py, do not edit by hand -->"
LAG_END = "<!-- END bench/run --replica-lag generated section -->"
LAG_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2"]


def lag_replica_label(spec):
    if spec == "none":
        return "none (primary alone)"
    kind, _, n = spec.partition(":")
    return f"{'onelog' if kind == 'onelog' else 'MariaDB 10.11'} {n} thr" + (" (optimistic)" if kind != "onelog" and n != "0" else "")


class Lag:
    """The replica-lag cells by (primary, replica spec); a void or n/a cell gives no numbers."""

    def __init__(self, data):
        self.cfg = data["config"]
        self.cells = {(c["primary"], c["replica"]): c for c in data.get("replica_lag", [])}

    def ok(self, p, spec):
        c = self.cells.get((p, spec))
        return c if c and not c.get("na") and not c.get("void") else None

    def get(self, p, spec, key):
        c = self.ok(p, spec)
        return None if c is None else c.get(key)

    def behind(self, p, spec):
        """True when the replica had a backlog at the load's end (its apply rate is its speed),
        False when it kept up (its speed is at least the primary's rate), None when unknown."""
        c = self.ok(p, spec)
        if c is None:
            return None
        if c.get("not_caught_up"):
            return True
        return None if c.get("catchup_s") is None else c["catchup_s"] > 1.0

    def speed(self, p, spec):
        """(groups/s, is a lower bound): the replica's apply speed."""
        b = self.behind(p, spec)
        if b is None:
            return None, False
        if b:
            return self.get(p, spec, "apply_rate"), False
        return self.get(p, spec, "primary_groups_per_s"), True

    def vs_alone(self, p, spec):
        """The primary's TPS with this replica / alone (None without the baseline)."""
        return ratio(self.get(p, spec, "tps"), self.get(p, "none", "tps"))

    def note(self, p, spec):
        c = self.cells.get((p, spec))
        if c is None:
            return "not run"
        if spec == "none" and not c.get("na"):
            return "the primary's full speed"
        if c.get("na"):
            return "n/a: " + c["na"].replace("\n", " ").replace("|", "/")[:200]
        if c.get("void"):
            return "**void**: " + c["void"].replace("\n", " ").replace("|", "/")[:200]
        if c.get("not_caught_up"):
            return c["not_caught_up"]
        return "rows equal" + ("" if self.behind(p, spec) else "; kept up (apply rate = the primary's)")


def lag_goals(r):
    cfg, rows = r.cfg, []
    parts, ok = [], []
    slowed = False
    for spec in [s for s in cfg["lag_replicas"] if s.startswith("onelog")]:
        sbm, cu = r.get("onelog-engine", spec, "peak_sbm"), r.get("onelog-engine", spec, "catchup_s")
        speed = r.vs_alone("onelog-engine", spec)
        parts.append(f"{lag_replica_label(spec)}: peak {f(sbm, 0)} s, caught up {f(cu, 1)} s after the load, "
                     f"primary at {f(speed)}× its speed alone")
        late = r.behind("onelog-engine", spec) and r.get("onelog-engine", spec, "not_caught_up")
        lag_ok = False if late else None if sbm is None or cu is None else sbm < 1 and cu < 1.0
        slowed = slowed or bool(lag_ok and speed is not None and speed < 0.9)
        ok.append(lag_ok)
    v = verdict(ok)
    if v == "**met**" and slowed:
        v = "lag met, but not at full speed (the replica took the primary below 0.9× its speed alone)"
    rows.append(("onelog replica lag < 1 s behind an onelog primary at full D1 speed (peak Seconds_Behind_Master "
                 "< 1, caught up < 1 s after the load; primary TPS ≥ 0.9× alone)", "; ".join(parts) or "n/a", v))
    for p in cfg["lag_primaries"]:
        parts, ok = [], []
        for spec in [s for s in cfg["lag_replicas"] if s.startswith("onelog")]:
            other = "mariadb:" + spec.partition(":")[2]
            if other not in cfg["lag_replicas"]:
                continue
            (o, o_low), (m, m_low) = r.speed(p, spec), r.speed(p, other)
            x, n = ratio(o, m), spec.partition(":")[2]
            # a replica that kept up has only a lower bound (the primary's rate) for its speed
            if x is None:
                parts.append(f"{n} thr: n/a")
                ok.append(None)
            elif o_low and m_low:
                parts.append(f"{n} thr: both kept up with their primary (not comparable)")
                ok.append(None)
            else:
                rel = "≥ " if o_low else "≤ " if m_low else ""
                parts.append(f"{n} thr: {rel}{f(x)}× ({f(o, 0)} vs {f(m, 0)} GTIDs/s"
                             + (", onelog kept up" if o_low else ", MariaDB kept up" if m_low else "") + ")")
                ok.append(None if (o_low and x < 2.0) or (m_low and x >= 2.0) else x >= 2.0)
        rows.append((f"onelog replica applies ≥ 2× as fast as a MariaDB 10.11 replica with the same threads "
                     f"({LAG_PRIMARIES_LABEL.get(p, p)} primary)", "; ".join(parts) or "n/a", verdict(ok)))
    return rows


LAG_PRIMARIES_LABEL = {"onelog-engine": "onelog", "mariadb-binlog": "MariaDB 10.11"}


def lag_samples_table(r, p):
    """Seconds_Behind_Master / GTID distance at every sample of every cell of primary p: columns
    are the nominal sample times, the load's end and the catch-up."""
    step = r.cfg["lag_sample_s"]
    cols, rows = {}, []
    for spec in r.cfg["lag_replicas"]:
        c = r.cells.get((p, spec))
        if not c or c.get("na"):
            continue
        vals = {}
        for s in c.get("samples", []):
            v = f"{f(s['sbm'], 0)} / {s['gtid_distance']}"
            if s["phase"] == "load end":
                key, name = (c["load_s"] + 0.5, 1), "load end"
            elif s["phase"] == "caught up":
                key, name = (float("inf"), 2), "caught up"
                v += f" (+{f(c.get('catchup_s'), 1)} s)"
            else:
                nominal = round(s["t"] / step) * step
                key, name = (nominal, 0), f"{nominal:g}"
            cols[key] = name
            vals[key] = v
        rows.append((spec, vals))
    order = sorted(cols)
    return table(["replica \\ t (s)"] + [cols[k] for k in order],
                 [[lag_replica_label(spec)] + [v.get(k, "") for k in order] for spec, v in rows])


def nice_top(v):
    """The smallest of 1, 2, 4, 5, 8 x 10^k at or above v (axis tops that divide into 4 or 5
    round steps)."""
    k = 1
    while k * 10 < v:
        k *= 10
    return next(m * k for m in (1, 2, 4, 5, 8, 10) if m * k >= v)


def nice_steps(top):
    """How many equal round steps divide a nice_top value: 5 for 1 and 5 x 10^k, else 4."""
    return 5 if str(int(top))[0] in "15" else 4


def lag_svg(r, p):
    """An SVG (written here, no plotting library): GTID distance (top) and Seconds_Behind_Master
    (bottom) against seconds since the load started, one line per replica of primary p."""
    series = [(spec, r.cells[(p, spec)]) for spec in r.cfg["lag_replicas"]
              if (p, spec) in r.cells and r.cells[(p, spec)].get("trace")]
    if not series:
        return None
    W, H, L, R_, T, PH, GAP = 820, 490, 70, 240, 48, 170, 55
    tmax = nice_top(max(max(t for t, _ in c["trace"]) for _, c in series))
    dmax = nice_top(max(max(d for _, d in c["trace"]) for _, c in series))
    smax = nice_top(max([s["sbm"] for _, c in series for s in c["samples"] if s["sbm"] is not None] + [1]))
    pw = W - L - R_
    x = lambda t: L + pw * t / tmax  # noqa: E731
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="11">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{L}" y="18" font-size="13">Replica lag under sysbench oltp_write_only, '
           f'{LAG_PRIMARIES_LABEL.get(p, p)} primary</text>']
    for k, (name, vmax, unit) in enumerate((("GTID distance (transactions)", dmax, ""), ("Seconds_Behind_Master", smax, " s"))):
        top = T + k * (PH + GAP)
        y = lambda v: top + PH - PH * v / vmax  # noqa: E731,B023
        out.append(f'<rect x="{L}" y="{top}" width="{pw}" height="{PH}" fill="none" stroke="#888"/>')
        out.append(f'<text x="{L}" y="{top - 4}">{name}</text>')
        n = nice_steps(vmax)
        for i in range(n + 1):
            v = vmax * i / n
            out.append(f'<text x="{L - 5}" y="{y(v) + 4:.1f}" text-anchor="end">{v:g}{unit}</text>')
            out.append(f'<line x1="{L}" x2="{L + pw}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#eee"/>')
        n = nice_steps(tmax)
        for i in range(n + 1):
            t = tmax * i / n
            out.append(f'<text x="{x(t):.1f}" y="{top + PH + 14}" text-anchor="middle">{t:g} s</text>')
        load_s = series[0][1].get("load_s")
        if load_s:
            out.append(f'<line x1="{x(load_s):.1f}" x2="{x(load_s):.1f}" y1="{top}" y2="{top + PH}" '
                       'stroke="#555" stroke-dasharray="4 3"/>')
            out.append(f'<text x="{x(load_s) + 3:.1f}" y="{top + 12}" fill="#555">load ends</text>')
        for j, (spec, c) in enumerate(series):
            col = LAG_COLORS[j % len(LAG_COLORS)]
            pts = ([(t, d) for t, d in c["trace"]] if k == 0 else
                   [(s["t"], s["sbm"]) for s in c["samples"] if s["sbm"] is not None])
            if pts:
                out.append(f'<polyline fill="none" stroke="{col}" stroke-width="1.5" points="'
                           + " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in pts) + '"/>')
    for j, (spec, c) in enumerate(series):
        col = LAG_COLORS[j % len(LAG_COLORS)]
        ly = T + 10 + 18 * j
        out.append(f'<line x1="{W - R_ + 15}" x2="{W - R_ + 40}" y1="{ly}" y2="{ly}" stroke="{col}" stroke-width="2"/>')
        out.append(f'<text x="{W - R_ + 45}" y="{ly + 4}">{lag_replica_label(spec)}'
                   f'{" (void)" if c.get("void") else ""}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def replica_lag_tables(data, svgs=None):
    """The result table, the per-sample tables and the goals (printed by bench/run --replica-lag,
    and in the docs); svgs maps a primary to its plot's path relative to docs/."""
    r, cfg = Lag(data), data["config"]
    rows = []
    for p in cfg["lag_primaries"]:
        for spec in (["none"] if cfg.get("lag_baseline") else []) + cfg["lag_replicas"]:
            g = lambda k: r.get(p, spec, k)  # noqa: E731
            c = r.cells.get((p, spec)) or {}
            sp, low = r.speed(p, spec)
            time_lag = ratio(g("peak_gtid_distance_load"), g("primary_groups_per_s"))
            rows.append([LAG_PRIMARIES_LABEL.get(p, p), lag_replica_label(spec), f(g("tps"), 0),
                         f(r.vs_alone(p, spec)) if spec != "none" else ("1" if g("tps") else "n/a"),
                         f(g("primary_groups_per_s"), 0), f(g("peak_sbm"), 0), f(g("peak_gtid_distance_load"), 0),
                         f(time_lag, 2), (f"> {cfg['lag_idle_factor'] * cfg['lag_seconds']}" if c.get("not_caught_up")
                                          else f(c.get("catchup_s") if r.ok(p, spec) else None, 1)),
                         f(g("apply_rate"), 0), ("≥ " if low else "") + f(sp, 0),
                         f(g("primary_cpu_ms_per_gtid")), f(g("replica_cpu_ms_per_gtid")), r.note(p, spec)])
    out = [table(["primary", "replica", "primary TPS", "TPS vs alone", "primary GTIDs/s", "peak Seconds_Behind_Master",
                  "peak GTID distance (load)", "peak distance / primary rate (s)", "caught up after load (s)",
                  "apply rate while behind (GTIDs/s)", "replica speed (GTIDs/s)", "primary CPU ms/GTID",
                  "replica CPU ms/GTID", ""], rows), ""]
    for p in cfg["lag_primaries"]:
        out += [f"#### {LAG_PRIMARIES_LABEL.get(p, p)} primary: Seconds_Behind_Master (s) / GTID distance per sample", ""]
        if svgs and svgs.get(p):
            out += [f"![replica lag, {LAG_PRIMARIES_LABEL.get(p, p)} primary]({svgs[p]})", ""]
        out += [lag_samples_table(r, p), ""]
    out += ["#### Goals (issue 12)", "", table(["goal", "measured", "verdict"], lag_goals(r)), ""]
    return "\n".join(out)


def replica_lag_method(data):
    cfg, mc = data["config"], data["machine"]
    quick = cfg["mode"] == "quick"
    cmd = "bench/run --replica-lag --quick" if quick else "bench/run --replica-lag"
    idle = cfg["lag_idle_factor"] * cfg["lag_seconds"]
    kind = (f"a {mc['cpus']} vCPU VM" if mc.get("hypervisor") else f"{mc['cpus']} CPUs") + (
        f" ({mc['virt']} inside)" if mc.get("virt") and mc.get("virt") != "none" else "")
    out = [f"Generated by `{cmd}` on {data['generated']} (measuring took {data.get('elapsed_s', '?')} s).",
           f"Machine: {kind}, {mc['cpu_model']}, {mc['mem_gib']} GiB; disk {mc['disk']}; load average "
           f"before {' '.join(mc['loadavg_before'])}, after {' '.join(data.get('loadavg_after', ['?']))}; "
           f"{mc['mariadb']}; {data['onelog'].get('version', 'onelog ?')} (source {mc.get('git', '?')}).", ""]
    if quick:
        out += [f"**Quick mode**: {cfg['lag_seconds']} s of load instead of 180 s, {cfg['tables']} tables × "
                f"{cfg['table_size']} rows, replicas {', '.join(cfg['lag_replicas'])}: indicative numbers; the full "
                "run is `bench/run --replica-lag`.", ""]
    loads = [float(x) for x in mc.get("loadavg_before", [])[:1] + data.get("loadavg_after", [])[:1]]
    if loads and max(loads) > mc["cpus"]:
        out += [f"**Shared machine**: the 1-minute load average reached {max(loads):g} on {mc['cpus']} CPUs, so other "
                "processes ran during the measurement and took CPU time from the primary and the replica: cells "
                "(and the primary's speed alone) vary from run to run by more than some of the differences "
                "between them. Read single cells as indicative.", ""]
    out.append(f"""The seed's method (seed 001, "Replica lag under load: Seconds_Behind_Master, 1 primary → 1 replica"):
- One cell per primary × replica configuration, each on fresh servers: the replica is attached
  (`CHANGE MASTER TO … MASTER_USE_GTID=slave_pos; SET GLOBAL slave_parallel_threads=N;
  SET GLOBAL slave_parallel_mode='optimistic'; START SLAVE`), `sysbench prepare` ({cfg['tables']} tables ×
  {cfg['table_size']} rows, its `CREATE DATABASE` included) runs on the primary and is replicated, then
  sysbench `oltp_write_only`,
  {cfg['lag_threads']} threads, `--rand-type=uniform --rand-seed={cfg['seed']}`, loads the primary for
  {cfg['lag_seconds']} s with {lat_text(cfg['lag_latency_us'])} injected fsync latency **on the primary only**
  (`bench/fsync_delay`, LD_PRELOAD; the replica runs on the real disk), then the primary is idle until the
  replica has caught up (at most {idle} s).
- Primaries: **onelog** (engine mode: the log is the binlog, innodb_flush_log_at_trx_commit=1 = D1) and
  **MariaDB 10.11** (`--log-bin --binlog-format=ROW --sync-binlog=1 --innodb-flush-log-at-trx-commit=1`,
  utf8mb4). Replicas: **onelog** (engine mode, D1, server id 2) with 0, 4 and 16 parallel threads and
  **MariaDB 10.11** (`--skip-log-bin`, innodb_flush_log_at_trx_commit=1, utf8mb4) with 0 and 4 threads,
  optimistic mode.
- **Primary alone**: each primary also runs the same load without a replica first (its full speed); "TPS
  vs alone" is the primary's TPS with the replica attached over that.
- Every {cfg['lag_sample_s']} s from the load's start, at its end and when the replica caught up: the replica's
  `Seconds_Behind_Master` (SHOW SLAVE STATUS) and the **GTID distance** = the primary's domain-0 seq_no in
  `@@gtid_binlog_pos` − the replica's in `@@gtid_slave_pos` (transactions not yet applied). A finer trace of
  both seq_nos every {cfg['lag_poll_s']:g} s gives the plot, the **apply rate while behind** (GTIDs the replica
  applied per second over the trace intervals it was behind at both ends) and the **catch-up time** (from the
  load's end to the replica holding the primary's last GTID).
- **CPU ms/GTID**: user + system CPU time of the server process (`/proc/PID/stat`) from the load's start
  to the catch-up, per GTID it committed (primary) or applied (replica): on a machine whose CPUs both
  servers share, what each transaction costs them.
- **Replica speed**: the apply rate while behind when the replica still had a backlog 1 s after the load
  ended; a replica that kept up applied as fast as the primary committed, so its speed is shown as
  ≥ the primary's GTID rate. The "2× as fast" goal compares a replica that kept up only against one
  that fell behind.
- After the catch-up every sysbench table must hold the same rows on both servers (an md5 over all rows
  `ORDER BY id`, read from each server); otherwise, or when replication stopped, the cell is **void**
  (listed, never counted). A replica still behind {idle} s after the load is shown with its lag and
  apply rate as "not caught up" (its rows are not compared). A replica that cannot be configured
  (onelog before its replica side was merged) is n/a with the server's error text.
- **One primary and one replica at a time**: on this {mc['cpus']}-CPU machine the primary, the replica and
  sysbench already share every CPU (nothing pinned unless `BENCH_REPL_PRIMARY_CPUS` /
  `BENCH_REPL_REPLICA_CPUS` are set); running cells side by side would measure the machine, so the
  cells run one after another in one run, and the replica's apply speed here is what the CPUs left by
  the primary and sysbench allow.
""")
    return "\n".join(out)


def write_replica_lag(data, repo, results_path, docs=None):
    docs = docs or os.path.join(repo, "docs")
    rel = os.path.relpath(results_path, repo)
    stem = os.path.splitext(os.path.basename(results_path))[0]
    r, svgs = Lag(data), {}
    os.makedirs(os.path.join(docs, "bench"), exist_ok=True)
    for p in data["config"]["lag_primaries"]:
        svg = lag_svg(r, p)
        if svg:
            name = f"{stem}-{p}.svg"
            with open(os.path.join(docs, "bench", name), "w") as fh:
                fh.write(svg)
            svgs[p] = f"bench/{name}"
    text = "\n".join(["## Replica lag: onelog and MariaDB 10.11 replicas under load (issue 12)", "",
                      replica_lag_method(data), f"Raw numbers: `{rel}`.", "", replica_lag_tables(data, svgs)])
    replace_section(os.path.join(docs, "BENCHMARKS.md"), LAG_BEGIN, LAG_END, text, "onelog benchmarks")
    print(f"bench/run: wrote the replica-lag section of {docs}/BENCHMARKS.md and {len(svgs)} plots in {docs}/bench/")


# ----------------------------------------------------------------------------- backup (issue 13)

BACKUP_BEGIN = "<!-- BEGIN bench/run --backup generated section: written by bench/lib/report.py, do not edit by hand -->"
BACKUP_END = "<!-- END bench/run --backup generated section -->"
BACKUP_LABEL = {"onelog-engine": "onelog (`onelog backup` / `onelog restore`)",
                "mariadb-binlog": "MariaDB 10.11 (`mariadb-backup --backup` / `--prepare`)"}


def mb(v):
    return None if v is None else v / 1e6


def backup_total(c):
    return None if c.get("backup_s") is None or c.get("restore_s") is None else c["backup_s"] + c["restore_s"]


def backup_ratio(c):
    return ratio(c.get("tps_during"), c.get("tps_without"))


def backup_note(c, cfg):
    if c.get("na"):
        return "n/a: " + " ".join(c["na"].split())[:300].replace("|", "/")
    notes = []
    if c.get("earlier_run"):
        notes.append(f"measured in an earlier run ({c.get('measured_at')}, load average "
                     f"{' '.join(c.get('loadavg_at_start') or ['?'])})")
    if c.get("load_ended_first"):
        notes.append("the load ended before the backup: TPS during = the intervals up to the load's end")
    if c.get("verified") is False:
        notes.append(f"restored server NOT verified: rows {c.get('restored_rows')}"
                     + (f", {c['check_table']}" if c.get("check_table") else "")
                     + ("" if c.get("gtid_ok", True) else f", gtid_binlog_pos {c.get('restored_gtid_pos')!r} ≠ "
                        f"backup end {c.get('end_gtid_pos')!r}"))
    elif c.get("verified"):
        notes.append(f"restored: {cfg['backup_tables']} × {cfg['backup_table_size']} rows"
                     + (", CHECK TABLE OK" if c["system"].startswith("mariadb") else
                        f", `onelog check` ok, gtid_binlog_pos = backup end {c.get('end_gtid_pos')}"))
    if c.get("cpu_s"):
        notes.append("CPU (user + sys): " + ", ".join(f"{k} {f(v, 1)} s" for k, v in c["cpu_s"].items()))
    if c.get("intervals_during") is not None:
        notes.append(f"TPS during over {c['intervals_during']} interval(s) of 1 s")
    if c.get("log_bytes") is not None:
        notes.append(f"backup = checkpoint {f(mb(c.get('checkpoint_bytes') or 0), 0)} MB + log "
                     f"{f(mb(c['log_bytes']), 0)} MB (LSN {c.get('start_lsn')}..{c.get('end_lsn')})")
    if c.get("copy_back_s") is not None:
        notes.append(f"copy-back {f(c['copy_back_s'], 1)} s more (not in total)")
    return " ".join("; ".join(notes).split()).replace("|", "/")


def backup_goals(data):
    cells = {c["system"]: c for c in data.get("backup", [])}
    o, m = cells.get("onelog-engine", {}), cells.get("mariadb-binlog", {})
    ot, mt = backup_total(o), backup_total(m)
    fast = None if ot is None or mt is None else ot < mt
    r = backup_ratio(o)
    keep = None if r is None else r >= 0.9
    return [["onelog backup + restore faster than mariadb-backup's backup + prepare",
             f"{f(ot, 1)} s vs {f(mt, 1)} s" + (f" (onelog {f(mt / ot)}× as fast)" if ot and mt else ""),
             verdict([fast])],
            ["onelog TPS during the backup ≥ 90% of without", "n/a" if r is None else f"{f(r * 100, 0)}%",
             verdict([keep])]]


def backup_tables(data):
    cfg = data["config"]
    rows = []
    for c in data.get("backup", []):
        rows.append([BACKUP_LABEL.get(c["system"], c["system"]), f(mb(c.get("data_bytes")), 0),
                     f(mb(c.get("backup_bytes")), 0), f(c.get("backup_s"), 1), f(c.get("backup_mb_s"), 0),
                     f(c.get("restore_s"), 1), f(backup_total(c), 1), f(c.get("restored_start_s"), 1),
                     f(c.get("tps_without"), 0),
                     f(c.get("tps_during"), 0), f(backup_ratio(c)), backup_note(c, cfg)])
    out = [table(["server", "data dir (MB)", "backup (MB)", "backup (s)", "backup MB/s", "restore / prepare (s)",
                  "total (s)", "restored server ready (s)", "TPS without", "TPS during backup", "during / without", ""], rows), "",
           "#### Goals (issue 13)", "", table(["goal", "measured", "verdict"], backup_goals(data)), ""]
    return "\n".join(out)


def backup_method(data):
    cfg, mc = data["config"], data["machine"]
    quick = cfg["mode"] == "quick"
    cmd = "bench/run --backup --quick" if quick else "bench/run --backup"
    kind = (f"a {mc['cpus']} vCPU VM" if mc.get("hypervisor") else f"{mc['cpus']} CPUs") + (
        f" ({mc['virt']} inside)" if mc.get("virt") and mc.get("virt") != "none" else "")
    out = [f"Generated by `{cmd}` on {data['generated']} (measuring took {data.get('elapsed_s', '?')} s).",
           f"Machine: {kind}, {mc['cpu_model']}, {mc['mem_gib']} GiB; disk {mc['disk']}; load average "
           f"before {' '.join(mc['loadavg_before'])}, after {' '.join(data.get('loadavg_after', ['?']))}; "
           f"{mc['mariadb']}; {data['onelog'].get('version', 'onelog ?')} (source {mc.get('git', '?')}).", ""]
    if quick:
        out += [f"**Quick mode**: {cfg['backup_tables']} tables × {cfg['backup_table_size']} rows and "
                f"{cfg['backup_seconds']} s loads instead of 4 × 1 000 000 rows and 90 s: indicative numbers; the "
                "full run is `bench/run --backup`.", ""]
    loads = [float(x) for x in mc.get("loadavg_before", [])[:1] + data.get("loadavg_after", [])[:1]]
    if loads and max(loads) > mc["cpus"]:
        out += [f"**Shared machine**: the 1-minute load average reached {max(loads):g} on {mc['cpus']} CPUs: other "
                "processes took CPU time during the measurement. Read single cells as indicative.", ""]
    out.append(f"""Method, per server, each on a fresh data directory, one server at a time:
- **onelog** in engine mode (the log is the binlog, innodb_flush_log_at_trx_commit=1 = D1) and **MariaDB
  10.11** (`--log-bin --binlog-format=ROW --sync-binlog=1 --innodb-flush-log-at-trx-commit=1`,
  `--innodb-buffer-pool-size=2G`), both on the real disk.
- `sysbench prepare`: {cfg['backup_tables']} tables × {cfg['backup_table_size']} rows, then
  {cfg['backup_warmup']} s of warm-up (not measured). "data dir" is the data directory's size after it
  (onelog's counts its preallocated log segments, `--max-binlog-size=256M` each, in full; MariaDB's
  its InnoDB files, 256 MB redo log and binlog).
- **TPS without**: sysbench `oltp_write_only`, {cfg['backup_threads']} threads, {cfg['backup_seconds']} s,
  `--rand-type=uniform --report-interval=1`.
- **TPS during backup**: the same load again; {cfg['backup_delay_s']} s into it the backup starts (onelog:
  `onelog backup --target-dir=B` as a `RELOAD`-only account over TCP; MariaDB: `mariadb-backup --backup
  --target-dir=B` as root, default `--parallel=1`). TPS during = the mean of sysbench's 1-second intervals
  that overlap the backup's run.
- **backup s / MB/s**: the backup command's wall time; MB/s = bytes in the backup directory / that time.
- **restore / prepare s**: after the server is stopped: onelog `onelog restore --target-dir=NEW B`
  (verifies the backup, writes the checkpoint and the log into NEW, runs the engine's recovery, sets
  gtid_slave_pos); MariaDB `mariadb-backup --prepare --target-dir=B` (the redo apply, in place): the
  issue compares backup + prepare. MariaDB's `--copy-back` into NEW is timed apart and not counted
  in "total"; onelog's restore already writes NEW, so its total includes the copy.
- **restored server ready**: from starting the server on NEW to its first answered query (not in
  "total").
- **Verification**: a server started on NEW must hold exactly {cfg['backup_table_size']} rows in every table
  (oltp_write_only deletes and re-inserts a row in one transaction, so every committed state has that
  count); MariaDB: `CHECK TABLE` OK on each; onelog: `onelog check NEW` passes and the restored
  `@@gtid_binlog_pos` equals the backup's `end_gtid_pos` (backup.info).
- **Not measured here**: `--stream` (onelog tar, mariadb-backup xbstream), incremental backups,
  mariadb-backup `--parallel` > 1, point-in-time restores, a backup on a separate disk (both write
  the backup to the same disk as the data directory); cells shown "n/a" were not run, with the reason.
""")
    return "\n".join(out)


def write_backup(data, repo, results_path, docs=None):
    docs = docs or os.path.join(repo, "docs")
    rel = os.path.relpath(results_path, repo)
    text = "\n".join(["## Backup and restore: onelog vs mariadb-backup (issue 13)", "",
                      backup_method(data), f"Raw numbers: `{rel}`.", "", backup_tables(data)])
    replace_section(os.path.join(docs, "BENCHMARKS.md"), BACKUP_BEGIN, BACKUP_END, text, "onelog benchmarks")
    print(f"bench/run: wrote the backup section of {docs}/BENCHMARKS.md")


# ----------------------------------------------------------------------------- commit (issue 14)

COMMIT_BEGIN = "<!-- BEGIN bench/run --commit generated section: written by bench/lib/report.py, do not edit by hand -->"
COMMIT_END = "<!-- END bench/run --commit generated section -->"
GROUP_BUCKETS = [("1", "1"), ("2-3", "2_3"), ("4-7", "4_7"), ("8-15", "8_15"), ("16-31", "16_31"),
                 ("32-63", "32_63"), ("64+", "64_plus")]
PHASES = ["queue_wait", "encode", "write", "apply", "apply_during_sync", "sync", "ack"]
# Issue 14 part 2's goals: D1 / D2 of onelog at 1 ms, onelog D1 / MariaDB D1 at 3 ms.
D1_D2_GOALS = {(1000, 32): 0.8, (1000, 8): 0.5}
VS_MARIADB_GOALS = {(3000, 1): 2.0, (3000, 8): 2.4, (3000, 32): 3.3}


class Commit:
    """The --commit cells by (system, durability, latency, threads); with BENCH_COMMIT_RUNS > 1 each
    number (and each counter delta) is the median over the runs of that cell."""

    def __init__(self, data):
        self.cfg = data["config"]
        runs = {}
        for c in data.get("commit_table", []):
            runs.setdefault((c["system"], c["durability"], c["latency_us"], c["threads"]), []).append(c)
        self.cells = {k: median_cell(cs) for k, cs in runs.items()}
        self.na = data.get("commit_na", {})

    def get(self, system, dur, lat, t, key):
        c = self.cells.get((system, dur, lat, t))
        return None if c is None else c.get(key)

    def d1_d2(self, lat, t):
        return ratio(self.get("onelog-engine", "D1", lat, t, "tps"), self.get("onelog-engine", "D2", lat, t, "tps"))

    def vs_mariadb(self, lat, t):
        return ratio(self.get("onelog-engine", "D1", lat, t, "tps"), self.get("mariadb-binlog", "D1", lat, t, "tps"))


def median_cell(cs):
    if len(cs) == 1:
        return cs[0]
    cell = dict(cs[-1], runs=len(cs))
    for fld, v in cs[-1].items():
        if isinstance(v, (int, float)) and not isinstance(v, bool) and fld not in ("threads", "latency_us", "run"):
            vals = [c[fld] for c in cs if isinstance(c.get(fld), (int, float))]
            cell[fld] = statistics.median(vals) if vals else None
    deltas = {}
    for c in cs:
        for k, v in (c.get("phase_deltas") or {}).items():
            deltas.setdefault(k, []).append(v)
    cell["phase_deltas"] = {k: statistics.median(v) for k, v in deltas.items()}
    return cell


def pct(v, d=0):
    return "n/a" if v is None else f"{v * 100:.{d}f}%"


def times(v):
    return "n/a" if v is None else f"{v:.2f}×"


def commit_goal_cell(c, lat, t):
    out = []
    if (lat, t) in D1_D2_GOALS:
        need = D1_D2_GOALS[(lat, t)]
        r = c.d1_d2(lat, t)
        out.append(f"D1/D2 ≥ {need * 100:.0f}%: {verdict([None if r is None else r >= need])}")
    if (lat, t) in VS_MARIADB_GOALS:
        need = VS_MARIADB_GOALS[(lat, t)]
        r = c.vs_mariadb(lat, t)
        out.append(f"onelog/MariaDB ≥ {need:g}×: {verdict([None if r is None else r >= need])}")
    return "; ".join(out)


def commit_main_table(c):
    cfg = c.cfg
    rows = []
    for lat in cfg["commit_latencies_us"]:
        for t in cfg["commit_threads"]:
            rows.append([lat_text(lat), t, f(c.get("onelog-engine", "D1", lat, t, "tps"), 0),
                         f(c.get("onelog-engine", "D2", lat, t, "tps"), 0), pct(c.d1_d2(lat, t)),
                         f(c.get("mariadb-binlog", "D1", lat, t, "tps"), 0), times(c.vs_mariadb(lat, t)),
                         f(c.get("onelog-engine", "D1", lat, t, "log_fsyncs_per_txn"), 3),
                         f(c.get("mariadb-binlog", "D1", lat, t, "fsyncs_per_txn"), 3),
                         f(c.get("onelog-engine", "D1", lat, t, "p99")), f(c.get("mariadb-binlog", "D1", lat, t, "p99")),
                         commit_goal_cell(c, lat, t)])
    return table(["fsync latency", "threads", "onelog D1 TPS", "onelog D2 TPS", "D1/D2", "MariaDB D1 TPS",
                  "onelog D1 / MariaDB D1", "onelog D1 fsyncs/trx", "MariaDB D1 fsyncs/trx", "onelog D1 p99 ms",
                  "MariaDB D1 p99 ms", "goal"], rows)


def commit_sync_table(c):
    """The preload's view of each cell: mean real sync time (without the injected sleep) and mean sleep."""
    cfg = c.cfg
    rows = []
    for lat in cfg["commit_latencies_us"]:
        for t in cfg["commit_threads"]:
            row = [lat_text(lat), t]
            for s, dur in (("onelog-engine", "D1"), ("onelog-engine", "D2"), ("mariadb-binlog", "D1")):
                row.append(f"{f(c.get(s, dur, lat, t, 'mean_sync_us'), 0)} / {f(c.get(s, dur, lat, t, 'mean_delay_us'), 0)}"
                           f" / {f(c.get(s, dur, lat, t, 'fsyncs_per_txn'), 3)}")
            rows.append(row)
    return table(["fsync latency", "threads", "onelog D1", "onelog D2", "MariaDB D1"], rows)


def commit_goals(c):
    rows = []
    for (lat, t), need in D1_D2_GOALS.items():
        r = c.d1_d2(lat, t)
        rows.append([f"onelog D1 ≥ {need * 100:.0f}% of onelog D2 at {lat_text(lat)}, {t} threads", pct(r),
                     verdict([None if r is None else r >= need])])
    for (lat, t), need in VS_MARIADB_GOALS.items():
        r = c.vs_mariadb(lat, t)
        rows.append([f"onelog D1 ≥ {need:g}× MariaDB D1 at {lat_text(lat)}, {t} thread{'s' if t > 1 else ''}",
                     times(r), verdict([None if r is None else r >= need])])
    return rows


def phase_row(cell):
    """bench/commit_profile.sh's arithmetic on one cell's counter deltas."""
    d = cell.get("phase_deltas") or {}
    commits, groups, fs = d.get("Binlog_commits"), d.get("Binlog_group_commits"), d.get("Onelog_log_fsyncs")
    wall_us = (cell.get("wall_s") or 0) * 1e6
    busy = d.get("Onelog_log_fsync_busy_us")
    row = [f(cell.get("tps"), 0), f(commits, 0), f(groups, 0), f(ratio(commits, groups), 1), f(ratio(commits, fs), 1),
           pct(ratio(busy, wall_us))]
    for p in PHASES:
        us = d.get(f"Onelog_commit_{p}_us")
        row.append(f(ratio(us, commits if p == "queue_wait" else groups), 0))
    ones = d.get("Onelog_commit_groups_1")
    row.append(pct(ratio(ones, groups)))
    return row


def bar(share, width=40):
    n = 0 if share is None else round(share * width)
    return "#" * n + " " * (width - n)


def group_histogram(cells):
    """The group-size table (every bucket) and the bar chart (buckets up to the largest one any of
    these cells used)."""
    rows, chart = [], []
    used = [i for i, (_, k) in enumerate(GROUP_BUCKETS) for _, cell in cells
            if (cell.get("phase_deltas") or {}).get(f"Onelog_commit_groups_{k}")]
    last = max(used) if used else len(GROUP_BUCKETS) - 1
    for label, cell in cells:
        d = cell.get("phase_deltas") or {}
        counts = [d.get(f"Onelog_commit_groups_{k}") for _, k in GROUP_BUCKETS]
        total = sum(x for x in counts if x is not None) if any(x is not None for x in counts) else None
        rows.append([label] + [f"{f(x, 0)} ({pct(ratio(x, total))})" for x in counts] + [f(total, 0)])
        chart.append(f"{label}: {f(total, 0)} groups")
        for (name, _), x in list(zip(GROUP_BUCKETS, counts))[:last + 1]:
            share = ratio(x, total)
            chart.append(f"  {name:>5} |{bar(share)}| {pct(share, 1):>6} {f(x, 0)}")
    hdr = ["profile, threads"] + [f"groups of {name}" for name, _ in GROUP_BUCKETS] + ["groups"]
    return table(hdr, rows), "\n".join(chart)


def commit_pipeline(c):
    """Part 1's histogram: per latency, the phase table and the group-size histogram of the onelog cells."""
    cfg = c.cfg
    out = []
    for lat in cfg["commit_latencies_us"]:
        cells = [(f"{dur}, {t} thr", c.cells[k]) for dur in ("D1", "D2") for t in cfg["commit_threads"]
                 for k in [("onelog-engine", dur, lat, t)] if k in c.cells]
        if not cells:
            continue
        rows = [[label] + phase_row(cell) for label, cell in cells]
        out += [f"#### Commit pipeline of onelog at {lat_text(lat)} injected fsync latency", "",
                table(["profile, threads", "TPS", "commits", "groups", "commits/group", "commits/fsync",
                       "fsync in flight", "queue wait / record µs", "encode / group µs", "write / group µs",
                       "apply / group µs", "of it during an fsync", "sync / group µs", "ack / group µs", "groups of 1"], rows), ""]
        hist, chart = group_histogram(cells)
        out += ["Group sizes (commit groups by records; share of the groups):", "", hist, "", "```", chart, "```", ""]
    return out


def mib(v):
    return None if v is None else v / 1048576


def large_cells(data):
    """{system: entry} of the large part, and the statements' keys in run order."""
    by = {e["system"]: e for e in data.get("commit_large", [])}
    keys = []
    for e in data.get("commit_large", []):
        for s in e.get("statements", []):
            if (s["kind"], s["rows"]) not in keys:
                keys.append((s["kind"], s["rows"]))
    return by, keys


def stmt_of(entry, kind, rows):
    if not entry:
        return None
    return next((s for s in entry.get("statements", []) if s["kind"] == kind and s["rows"] == rows), None)


def rss_text(s):
    if not s or s.get("rss_peak") is None:
        return "n/a"
    return (f"{f(mib(s['rss_peak']), 0)} (+{f(mib(s['rss_peak'] - (s.get('rss_before') or 0)), 0)}; after "
            f"{f(mib(s.get('rss_settled') or s.get('rss_after')), 0)})")


def small_text(x):
    return "n/a" if not x else f"{f(x.get('p99_ms'))} / {f(x.get('max_ms'))} ({f(x.get('per_s'), 0)}/s)"


def stmt_total(s):
    return None if not s or s.get("na") else s.get("total_s")


def stmt_text(s):
    if not s:
        return "n/a"
    if s.get("na"):
        return "n/a: " + " ".join(s["na"].split())[:200].replace("|", "/")
    return f"{f(s['total_s'])} ({f(s['stmt_s'])} + {f(s['commit_s'], 3)})" + (
        f" {s['row_count_note']}" if s.get("row_count_note") else "")


def large_tables(data):
    by, keys = large_cells(data)
    o, m = by.get("onelog-engine"), by.get("mariadb-binlog")
    cfg = data["config"]
    out = []
    prep = []
    for key, what in (("load_prepare_s", f"sysbench prepare {cfg['commit_load_tables']} × {cfg['commit_load_rows']} rows"),
                      ("big_prepare_s", f"sysbench prepare 1 × {cfg['commit_big_rows']} rows (big.sbtest1)")):
        a, b = (o or {}).get(key), (m or {}).get(key)
        prep.append([what, f(a, 1), f(b, 1), times(ratio(a, b)) if a and b else "n/a",
                     verdict([None if a is None or b is None else a <= b]) if key == "load_prepare_s" else ""])
    out += ["#### Bulk load (part 4)", "", table(["load", "onelog s", "MariaDB s", "onelog / MariaDB (time)",
                                                 "onelog at least as fast"], prep), ""]
    rows = [["small commits alone (baseline)", "", "", "", "", "", "", small_text((o or {}).get("baseline")),
             small_text((m or {}).get("baseline")), ""]]
    for kind, n in keys:
        a, b = stmt_of(o, kind, n), stmt_of(m, kind, n)
        ta, tb = stmt_total(a), stmt_total(b)
        rows.append([(a or b)["sql"], f(n, 0), stmt_text(a), stmt_text(b), times(ratio(ta, tb)) if ta and tb else "n/a",
                     rss_text(a), rss_text(b), small_text((a or {}).get("small")), small_text((b or {}).get("small")),
                     verdict([None if ta is None or tb is None else ta <= tb])])
    out += ["#### Large transactions (part 3): BEGIN; statement; COMMIT", "",
            table(["statement", "rows", "onelog s (statement + COMMIT)", "MariaDB s", "onelog / MariaDB (time)",
                   "onelog peak RSS MiB (+ over before; after)", "MariaDB peak RSS MiB", "onelog small commits p99 / max ms (rate)",
                   "MariaDB small commits p99 / max ms (rate)", "onelog no slower"], rows), ""]
    for e in (o, m):
        if e and e.get("na"):
            out += [f"{e['label']}: n/a: " + " ".join(e["na"].split())[:600], ""]
    return out


def large_goals(data):
    by, keys = large_cells(data)
    o, m = by.get("onelog-engine"), by.get("mariadb-binlog")
    rows = []
    a, b = (o or {}).get("load_prepare_s"), (m or {}).get("load_prepare_s")
    rows.append(["sysbench prepare at least as fast as MariaDB's (part 4)", f"{f(a, 1)} s vs {f(b, 1)} s",
                 verdict([None if a is None or b is None else a <= b])])
    oks, parts = [], []
    for kind, n in keys:
        ta, tb = stmt_total(stmt_of(o, kind, n)), stmt_total(stmt_of(m, kind, n))
        oks.append(None if ta is None or tb is None else ta <= tb)
        parts.append(f"{kind} {f(n, 0)}: {f(ta)} s vs {f(tb)} s")
    rows.append(["big UPDATE and INSERT … SELECT commit no slower than MariaDB (part 3)", "; ".join(parts) or "n/a",
                 verdict(oks)])
    ups = [stmt_of(o, k, n) for k, n in keys if k == "update"]
    growth = [None if not s or s.get("na") or s.get("rss_peak") is None else s["rss_peak"] - (s.get("rss_before") or 0)
              for s in ups]
    ok = None
    if len(growth) >= 2 and None not in growth[:1] + growth[-1:]:
        ok = growth[-1] <= 2 * max(growth[0], 64 << 20)
    rows.append(["onelog memory bounded by the settings, not by the transaction's size (counted as: peak RSS "
                 "growth of the all-rows UPDATE ≤ 2× that of the partial one, at least 64 MiB)",
                 " vs ".join(f"{f(mib(g), 0)} MiB" for g in growth) or "n/a", verdict([ok])])
    return rows


def commit_tables(data):
    c = Commit(data)
    parts = c.cfg.get("commit_parts", [])
    out = []
    if "table" in parts:
        out += ["#### The issue's table: sysbench oltp_write_only, onelog D1 / D2 vs MariaDB D1", "",
                commit_main_table(c), "",
                "Syncs as the preload saw them: mean real sync µs (the disk's, without the injected sleep) / mean "
                "injected sleep µs / syncs per transaction (every fsync, fdatasync and O_DSYNC write of the server):", "",
                commit_sync_table(c), ""]
        for k, why in c.na.items():
            out += [f"n/a {k}: " + " ".join(why.split())[:400], ""]
    if "pipeline" in parts:
        out += commit_pipeline(c)
    if "large" in parts:
        out += large_tables(data)
    goals = (commit_goals(c) if "table" in parts else []) + (large_goals(data) if "large" in parts else [])
    if goals:
        out += ["#### Goals (issue 14)", "", table(["goal", "measured", "verdict"], goals), ""]
    return "\n".join(out)


def commit_method(data):
    cfg, mc = data["config"], data["machine"]
    quick = cfg["mode"] == "quick"
    envs = ([f"BENCH_COMMIT_TABLE_DIR={cfg['commit_table_dir']}"] if cfg.get("commit_table_dir") else []) + (
        [f"BENCH_COMMIT_RUNS={cfg['commit_runs']}"] if cfg.get("commit_runs", 1) > 1 else [])
    cmd = " ".join(envs + ["bench/run --commit"]) + (" --quick" if quick else "") + (
        f" --commit-parts={','.join(cfg['commit_parts'])}" if cfg["commit_parts"] != ["table", "pipeline", "large"] else "")
    kind = (f"a {mc['cpus']} vCPU VM" if mc.get("hypervisor") else f"{mc['cpus']} CPUs") + (
        f" ({mc['virt']} inside)" if mc.get("virt") and mc.get("virt") != "none" else "")
    out = [f"Generated by `{cmd}` on {data['generated']} (measuring took {data.get('elapsed_s', '?')} s).",
           f"Machine: {kind}, {mc['cpu_model']}, {mc['mem_gib']} GiB; disk {mc['disk']}; load average "
           f"before {' '.join(mc['loadavg_before'])}, after {' '.join(data.get('loadavg_after', ['?']))}; "
           f"{mc['mariadb']}; {data['onelog'].get('version', 'onelog ?')} (source {mc.get('git', '?')}).", ""]
    if quick:
        out += [f"**Quick mode**: {cfg['commit_seconds']} s per cell and {cfg['commit_big_rows']}-row big statements "
                "instead of 15 s and 1 000 000 rows: indicative numbers; the full run is `bench/run --commit`.", ""]
    loads = [float(x) for x in mc.get("loadavg_before", [])[:1] + data.get("loadavg_after", [])[:1]]
    if loads and max(loads) > mc["cpus"]:
        out += [f"**Shared machine**: the 1-minute load average reached {max(loads):g} on {mc['cpus']} CPUs: other "
                "processes took CPU time during the measurement. Read single cells as indicative.", ""]
    mem = next((e.get("mem_limit") for e in data.get("commit_large", []) if e.get("mem_limit")), None)
    n = cfg.get("commit_runs", 1)
    table_fs = (f" (the table's servers: on {cfg['commit_table_dir']}, {data.get('commit_table_fs', '?')}: a sync costs "
                "the injected latency only)" if cfg.get("commit_table_dir") else "")
    runs = f"; the whole table {n} times, every number a per-cell median" if n > 1 else ""
    out.append(f"""Method (one server at a time, each on a fresh data directory on the real disk{table_fs}, loopback TCP):
- **Systems**: onelog D1 and D2 (`--innodb-flush-log-at-trx-commit=1` / `2`; the log is the binlog) and
  MariaDB 10.11 D1 (`--log-bin --binlog-format=ROW --sync-binlog=1 --innodb-flush-log-at-trx-commit=1`,
  `--innodb-buffer-pool-size=2G --innodb-log-file-size=256M`).
- **The table**: per injected fsync latency ({', '.join(lat_text(x) for x in cfg['commit_latencies_us'])}; the
  `bench/fsync_delay` LD_PRELOAD sleeps that long after every fsync/fdatasync/O_DSYNC write of either server)
  and system, a fresh server, `sysbench prepare` of 1 table × {cfg['commit_table_size']} rows, {cfg['commit_warmup']} s
  of oltp_write_only warm-up at 8 threads, then oltp_write_only for {cfg['commit_seconds']} s at each of
  {', '.join(str(t) for t in cfg['commit_threads'])} threads (`--rand-type=uniform --rand-seed={cfg['seed']}`){runs}.
  fsyncs/trx: onelog = the `Onelog_log_fsyncs` delta / transactions; MariaDB = the syncs the preload
  counted (redo and binlog) / transactions. D1/D2 and onelog/MariaDB are TPS ratios of the same row.
- **The pipeline**: for every onelog cell, the deltas of SHOW GLOBAL STATUS `Onelog_commit_*_us`,
  `Onelog_log_fsync_busy_us`, `Onelog_commit_groups_*`, `Binlog_commits`, `Binlog_group_commits` and
  `Onelog_log_fsyncs` over the measured run (docs/SQL.md): commits/group = Binlog_commits /
  Binlog_group_commits; commits/fsync = Binlog_commits / Onelog_log_fsyncs; fsync in flight =
  Onelog_log_fsync_busy_us / the run's wall time; queue wait per record, every other phase per group
  (`bench/commit_profile.sh` computes the same for one cell).
- **Bulk load and large transactions**: onelog D1 and MariaDB D1 with no injected latency (the preload
  only counts), `--max-binlog-size=1G`, each bounded to {f(mib(cfg['commit_mem_limit']), 0)} MiB of
  resident memory ({(mem or {}).get('how', 'n/a')}; a server killed by it is reported, not waited for). Bulk load = the wall
  time of `sysbench prepare` of {cfg['commit_load_tables']} × {cfg['commit_load_rows']} rows ({min(cfg['commit_load_tables'], 8)}
  threads: multi-row INSERTs, then the secondary index). Then big.sbtest1 = 1 × {cfg['commit_big_rows']} rows
  (sysbench prepare) and big.copy (the same schema, emptied before each INSERT … SELECT); each big statement
  runs as BEGIN; statement; COMMIT in one client, timed from the statement to COMMIT's answer (ROW_COUNT()
  checked in between). Peak RSS = the server's VmHWM after a `clear_refs` reset, or the largest VmRSS sampled
  every 50 ms, whichever is larger ("after" = 1 s after COMMIT). Small commits = one sysbench thread of
  single-row autocommit `UPDATE sbtest.sbtestN SET k=k+1 WHERE id=?` (`bench/lib/small_commits.lua`: sysbench's
  oltp_update_index with start/stop files) running from the statement's start until COMMIT returns: p99 and
  max latency, number of commits; the baseline is the same client alone for {cfg['commit_small_seconds']} s.
""")
    return "\n".join(out)


def write_commit(data, repo, results_path, docs=None):
    docs = docs or os.path.join(repo, "docs")
    rel = os.path.relpath(results_path, repo)
    text = "\n".join(["## Commit pipeline, large transactions and bulk load: onelog vs MariaDB 10.11 (issue 14)", "",
                      commit_method(data), f"Raw numbers: `{rel}`.", "", commit_tables(data)])
    replace_section(os.path.join(docs, "BENCHMARKS.md"), COMMIT_BEGIN, COMMIT_END, text, "onelog benchmarks")
    print(f"bench/run: wrote the commit section of {docs}/BENCHMARKS.md")
