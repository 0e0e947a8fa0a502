"""Reads onelog's binlog with python-mysql-replication's BinLogStreamReader (MariaDB GTID mode,
non-blocking) and prints one JSON line per row: run by tests/replication_cdc.rs, which checks
the rows.

Usage: binlog_stream.py PORT USER PASSWORD GTID_START
Per row: `write|delete DB.T VALUES` or `update DB.T BEFORE -> AFTER`, then `names DB.T NAMES`;
VALUES and NAMES are JSON lists (values as strings, bytes as 0x-hex, NULL as null) so the
Rust side compares text.
"""
import json
import sys

from pymysqlreplication import BinLogStreamReader
from pymysqlreplication.row_event import (
    DeleteRowsEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
)


def text(v):
    if v is None:
        return None
    if isinstance(v, (bytes, bytearray)):
        return "0x" + bytes(v).hex()
    return str(v)


def row(values):
    return [text(v) for v in values.values()], list(values.keys())


def main():
    port, user, password, gtid = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    stream = BinLogStreamReader(
        connection_settings={"host": "127.0.0.1", "port": int(port), "user": user,
                             "passwd": password},
        server_id=77,
        is_mariadb=True,
        auto_position=gtid,
        blocking=False,
        only_events=[WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent],
    )
    try:
        for event in stream:
            table = f"{event.schema}.{event.table}"
            for r in event.rows:
                if isinstance(event, UpdateRowsEvent):
                    before, names = row(r["before_values"])
                    after, _ = row(r["after_values"])
                    print(f"update {table} {json.dumps(before)} -> {json.dumps(after)}")
                else:
                    values, names = row(r["values"])
                    kind = "write" if isinstance(event, WriteRowsEvent) else "delete"
                    print(f"{kind} {table} {json.dumps(values)}")
                print(f"names {table} {json.dumps(names)}", flush=True)
    finally:
        stream.close()


main()
