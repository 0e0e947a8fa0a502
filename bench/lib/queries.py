"""bench/lib/queries.py — `bench/run --queries [--quick]` (issue 15 part 5). Not a test.

Owns: the join and subquery benchmark. The same three tables, filled with the same seeded rows,
are loaded into onelog (engine mode) and into MariaDB 10.11 (InnoDB, 2 GB buffer pool); then
each query shape of SHAPES runs on both servers, one after the other, and the report prints a
table of milliseconds per query (the median of `q_runs` timed client runs of `q_reps` queries,
less the same client's time for `SELECT 1` repeated as often; a query slower than SLOW_S is
timed by its first run alone), the server CPU per query (from
/proc/<pid>/stat, so the client's own work is not in it) and onelog / MariaDB ratios. The goal
of the issue: no shape slower than MariaDB's by more than 2x.

Tables (`q_rows` rows in `ch` and `nk`, a tenth of that in `p`):
- `p(id PK, g INT KEY, name VARCHAR(20))`: parents; `g` has 100 distinct values;
- `ch(id PK, pid INT KEY, v INT, tag VARCHAR(20))`: children of `p` by `pid` (indexed);
- `nk(id PK, pv INT, w INT)`: the same shape without an index on `pv` (hash-join shapes).

Invariants:
- the two servers answer every shape with the same rows (compared as text); a shape whose
  answers differ is reported as void with both answers, never timed as if it were right;
- one server runs at a time (a 2-CPU machine: anything else would measure the machine), each on
  a fresh data directory, stopped before the next one starts;
- every wait is bounded: each client call by `q_timeout_s`, the server start by Server.start.
"""

import os
import random
import statistics
import subprocess
import time

import bench as B

# A query whose first run takes longer than this is timed by that run alone.
SLOW_S = 5.0

QUERY_SYSTEMS = {"onelog-engine": "onelog", "mariadb-nobinlog": "MariaDB 10.11"}

# (name, what the planner should do, SQL). Every shape returns one small result to compare.
SHAPES = [
    ("pk-join", "index lookup on the inner table's primary key",
     "SELECT COUNT(*), SUM(ch.v) FROM ch JOIN p ON p.id = ch.pid"),
    ("secondary-join", "filter the small side, index lookup on a secondary key",
     "SELECT COUNT(*), SUM(ch.v) FROM p JOIN ch ON ch.pid = p.id WHERE p.g = 5"),
    ("hash-join", "no index on the join column: hash join",
     "SELECT COUNT(*), SUM(nk.w) FROM p JOIN nk ON nk.pv = p.id"),
    ("hash-join-2col", "two-column equality, no usable index",
     "SELECT COUNT(*) FROM ch JOIN nk ON ch.v = nk.w AND ch.pid = nk.pv"),
    ("left-anti-join", "LEFT JOIN ... IS NULL without an index on the inner side",
     "SELECT COUNT(*) FROM p LEFT JOIN nk ON nk.pv = p.id WHERE nk.id IS NULL"),
    ("join-group-by", "join, GROUP BY a string, ORDER BY the count, LIMIT",
     "SELECT p.name, COUNT(*) FROM p JOIN ch ON ch.pid = p.id GROUP BY p.name ORDER BY 2 DESC, 1 LIMIT 3"),
    ("three-table", "three tables: a lookup join then a hash join",
     "SELECT COUNT(*), SUM(nk.w) FROM p JOIN ch ON ch.pid = p.id JOIN nk ON nk.id = ch.id WHERE p.g < 10"),
    ("in-subquery", "IN (uncorrelated subquery)",
     "SELECT COUNT(*), SUM(v) FROM ch WHERE pid IN (SELECT id FROM p WHERE g < 10)"),
    ("not-in-subquery", "NOT IN (subquery over an unindexed column)",
     "SELECT COUNT(*) FROM p WHERE id NOT IN (SELECT pv FROM nk WHERE pv IS NOT NULL)"),
    ("exists-correlated", "correlated EXISTS probing an index",
     "SELECT COUNT(*) FROM p WHERE EXISTS (SELECT 1 FROM ch WHERE ch.pid = p.id AND ch.v > 900)"),
    ("scalar-correlated", "correlated scalar subquery in the select list",
     "SELECT SUM((SELECT COUNT(*) FROM ch WHERE ch.pid = p.id)) FROM p WHERE p.g < 20"),
    ("derived-join", "derived table with GROUP BY joined back to a table",
     "SELECT COUNT(*), SUM(d.s) FROM (SELECT pid, SUM(v) AS s FROM ch GROUP BY pid) AS d "
     "JOIN p ON p.id = d.pid WHERE d.s > 3000"),
]


def make_config(args, cfg):
    q = args.quick
    cfg.update({
        "q_rows": B.env_int("BENCH_QUERY_ROWS", 100000),
        "q_reps": B.env_int("BENCH_QUERY_REPS", 2 if q else 5),
        "q_runs": B.env_int("BENCH_QUERY_RUNS", 3 if q else 5),
        "q_timeout_s": B.env_int("BENCH_QUERY_TIMEOUT_S", 600),
        "q_systems": B.env_list("BENCH_QUERY_SYSTEMS", list(QUERY_SYSTEMS)),
        "q_shapes": B.env_list("BENCH_QUERY_SHAPES", [s[0] for s in SHAPES]),
        "sections": ["queries"],
    })
    return cfg


def data_sql(rows, seed):
    """The load script: the same statements for both servers (seeded)."""
    r = random.Random(seed)
    parents = max(rows // 10, 1)
    out = ["DROP DATABASE IF EXISTS bq;", "CREATE DATABASE bq;", "USE bq;",
           "CREATE TABLE p (id INT PRIMARY KEY, g INT, name VARCHAR(20), KEY kg (g));",
           "CREATE TABLE ch (id INT PRIMARY KEY, pid INT, v INT, tag VARCHAR(20), KEY kp (pid));",
           "CREATE TABLE nk (id INT PRIMARY KEY, pv INT, w INT);"]

    def inserts(table, n, row):
        for a in range(1, n + 1, 1000):
            vals = ",".join(row(i) for i in range(a, min(a + 1000, n + 1)))
            out.append(f"INSERT INTO {table} VALUES {vals};")

    inserts("p", parents, lambda i: f"({i},{i % 100},'n{r.randrange(parents // 3 + 1)}')")
    # pid: every parent has children (about 10), a few rows point past the parents
    inserts("ch", rows, lambda i: f"({i},{r.randrange(1, parents + parents // 20 + 2)},{r.randrange(1000)},"
                                  f"'t{r.randrange(50)}')")
    # pv: about half of the parents are referenced, some rows are NULL
    inserts("nk", rows, lambda i: "({},{},{})".format(
        i, "NULL" if r.random() < 0.05 else r.randrange(1, 2 * parents), r.randrange(1000)))
    return "\n".join(out) + "\n"


def client(srv, sql, timeout):
    """Runs sql in one `mariadb` client; (seconds, stdout)."""
    t0 = time.monotonic()
    r = subprocess.run(B.client_args(srv.port) + ["-N", "-B", "bq"], input=sql, capture_output=True,
                       text=True, timeout=timeout)
    dt = time.monotonic() - t0
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip()[-500:])
    return dt, r.stdout


def server_cpu(srv):
    """The server's user + system CPU seconds so far."""
    with open(f"/proc/{srv.proc.pid}/stat") as fh:
        f = fh.read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def time_shape(srv, sql, cfg):
    """(ms per query, server CPU ms per query, answer): medians over q_runs client runs."""
    reps = cfg["q_reps"]
    c0 = server_cpu(srv)
    first, answer = client(srv, sql + ";\n", cfg["q_timeout_s"])  # also warms caches
    if first > SLOW_S:
        # one run is the measurement: repeating a query this slow would only take time
        return first * 1000, (server_cpu(srv) - c0) * 1000, answer.strip()
    walls, cpus = [], []
    for _ in range(cfg["q_runs"]):
        base = client(srv, "SELECT 1;\n" * reps, cfg["q_timeout_s"])[0]
        c0 = server_cpu(srv)
        dt, _ = client(srv, (sql + ";\n") * reps, cfg["q_timeout_s"])
        cpus.append((server_cpu(srv) - c0) / reps * 1000)
        walls.append(max(dt - base, 0) / reps * 1000)
    return statistics.median(walls), statistics.median(cpus), answer.strip()


def run_server(env, cfg, system, script):
    cell = {"system": system, "label": QUERY_SYSTEMS.get(system, system), "shapes": {}}
    if system.startswith("onelog") and not env.onelog:
        cell["na"] = "no onelog binary"
        return cell
    srv = B.Server(env, system, 1, 1, 0, preload=False)
    try:
        B.log(f"queries: {cell['label']}: start, load {cfg['q_rows']} rows")
        srv.start()
        t0 = time.monotonic()
        r = subprocess.run(B.client_args(srv.port), input=script, capture_output=True, text=True,
                           timeout=cfg["q_timeout_s"])
        if r.returncode != 0:
            raise B.StartError(f"loading the tables failed: {r.stderr.strip()[-500:]}")
        cell["load_s"] = time.monotonic() - t0
        if system.startswith("mariadb"):
            client(srv, "ANALYZE TABLE p, ch, nk;\n", cfg["q_timeout_s"])
        for name, _what, sql in SHAPES:
            if name not in cfg["q_shapes"]:
                continue
            try:
                ms, cpu_ms, answer = time_shape(srv, sql, cfg)
                cell["shapes"][name] = {"ms": ms, "cpu_ms": cpu_ms, "answer": answer}
                B.log(f"  {name}: {ms:.1f} ms (server CPU {cpu_ms:.1f} ms) -> {answer[:60]!r}")
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                cell["shapes"][name] = {"error": str(e)[-300:]}
                B.log(f"  {name}: failed: {str(e)[-200:]}")
    except (B.StartError, RuntimeError, subprocess.TimeoutExpired) as e:
        cell["na"] = str(e)[-600:]
        B.log(f"  n/a: {cell['na']}")
    finally:
        srv.remove()
    return cell


def run(env, cfg, res):
    script = data_sql(cfg["q_rows"], cfg["seed"])
    res.data["queries"] = []
    for system in cfg["q_systems"]:
        res.data["queries"].append(run_server(env, cfg, system, script))
        res.save()


# ----------------------------------------------------------------------------- report

def tables(data):
    cells = {c["system"]: c for c in data.get("queries", [])}
    one, maria = cells.get("onelog-engine", {}), cells.get("mariadb-nobinlog", {})
    cfg, mc = data["config"], data["machine"]
    out = [f"Machine: {mc['cpu_model']}, {mc['cpus']} CPUs, {mc['mem_gib']} GiB ({'VM' if mc['hypervisor'] else 'bare metal'}); "
           f"onelog {data['onelog'].get('version', '?')} at {mc['git']}; {mc['mariadb']}.",
           f"{cfg['q_rows']:,} rows in `ch` and `nk`, {max(cfg['q_rows'] // 10, 1):,} in `p`; milliseconds per query "
           f"(median of {cfg['q_runs']} runs of {cfg['q_reps']}, client overhead subtracted) and server CPU "
           "milliseconds per query; ratio = onelog / MariaDB (below 1: onelog is faster). Goal: every ratio <= 2.", ""]
    for c in (one, maria):
        if c.get("na"):
            out += [f"{c['label']}: n/a ({c['na']})", ""]
    out += ["| shape | plan it needs | onelog ms | MariaDB ms | ratio | onelog CPU ms | MariaDB CPU ms | CPU ratio |",
            "|---|---|---|---|---|---|---|---|"]
    worst = None
    for name, what, _sql in SHAPES:
        a, b = one.get("shapes", {}).get(name), maria.get("shapes", {}).get(name)
        if not a or not b:
            continue
        if "error" in a or "error" in b:
            out.append(f"| {name} | {what} | {a.get('error', '')[:60]} | {b.get('error', '')[:60]} | failed | | | |")
            continue
        if a["answer"] != b["answer"]:
            out.append(f"| {name} | {what} | void: answers differ (`{a['answer'][:40]}` vs `{b['answer'][:40]}`) | | | | | |")
            continue
        ratio = a["ms"] / b["ms"] if b["ms"] > 0 else None
        cpu_ratio = a["cpu_ms"] / b["cpu_ms"] if b["cpu_ms"] > 0 else None
        if ratio is not None:
            worst = max(worst or 0, ratio)
        out.append(f"| {name} | {what} | {a['ms']:.1f} | {b['ms']:.1f} | {B.fmt(ratio)} | {a['cpu_ms']:.1f} | "
                   f"{b['cpu_ms']:.1f} | {B.fmt(cpu_ratio)} |")
    out += ["", "Queries:", ""] + [f"- `{name}`: `{sql}`" for name, _w, sql in SHAPES]
    if worst is not None:
        out += ["", f"Worst ratio: {worst:.2f} ({'meets' if worst <= 2 else 'misses'} the 2x goal)."]
    return "\n".join(out)


def write_report(data, repo, results_path, docs=None):
    import report  # bench/lib/report.py
    report.write_part("queries", "Joins and subqueries: onelog vs MariaDB 10.11 (issue 15 part 5)", tables(data), repo, results_path, docs)
