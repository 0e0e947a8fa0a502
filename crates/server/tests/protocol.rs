//! The protocol over real loopback sockets against the in-test backend (tests/common): handshake
//! and authentication, result sets in both protocols and both EOF styles, prepared statements
//! with every parameter type, connection limits, packet limits, malformed input, shutdown.

mod common;

use std::io::Write;
use std::net::TcpStream;
use std::sync::atomic::Ordering;

use common::{start, Client, Opts, Resp};
use mysql_common::constants::{CapabilityFlags, StatusFlags};
use mysql_common::Value as MyValue;
use onelog_binlog::Value;
use onelog_server::server_capabilities;

fn text_row(r: &Resp) -> Vec<Option<String>> {
    match r {
        Resp::Text { rows, .. } => rows[0]
            .iter()
            .map(|v| v.as_ref().map(|b| String::from_utf8_lossy(b).into_owned()))
            .collect(),
        other => panic!("expected text rows, got {other:?}"),
    }
}

#[test]
fn greeting_announces_mariadb_version_capabilities_and_native_password() {
    let (h, _) = start(common::config());
    let c = Client::connect_tcp(h.local_addr().unwrap(), &Opts::default()).unwrap();
    let g = &c.greeting;
    assert_eq!(g.protocol_version(), 10);
    assert_eq!(g.server_version_str(), "5.5.5-10.11.9-MariaDB-onelog");
    assert_eq!(g.nonce().len(), 20);
    assert_eq!(g.auth_plugin_name_str().unwrap(), "mysql_native_password");
    let caps = g.capabilities();
    assert_eq!(caps, server_capabilities());
    for f in [
        CapabilityFlags::CLIENT_PROTOCOL_41,
        CapabilityFlags::CLIENT_SECURE_CONNECTION,
        CapabilityFlags::CLIENT_PLUGIN_AUTH,
        CapabilityFlags::CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA,
        CapabilityFlags::CLIENT_CONNECT_WITH_DB,
        CapabilityFlags::CLIENT_MULTI_STATEMENTS,
        CapabilityFlags::CLIENT_MULTI_RESULTS,
        CapabilityFlags::CLIENT_PS_MULTI_RESULTS,
        CapabilityFlags::CLIENT_TRANSACTIONS,
        CapabilityFlags::CLIENT_CONNECT_ATTRS,
        CapabilityFlags::CLIENT_DEPRECATE_EOF,
        CapabilityFlags::CLIENT_LONG_FLAG,
    ] {
        assert!(caps.contains(f), "{f:?}");
    }
    // CLIENT_MYSQL (= CLIENT_LONG_PASSWORD) clear: a MariaDB server.
    assert!(!caps.contains(CapabilityFlags::CLIENT_LONG_PASSWORD));
    assert_eq!(g.mariadb_ext_capabilities().bits(), 0);
    assert!(g
        .status_flags()
        .contains(StatusFlags::SERVER_STATUS_AUTOCOMMIT));
}

#[test]
fn correct_password_authenticates_and_wrong_one_gets_1045() {
    let (h, shared) = start(common::config());
    let addr = h.local_addr().unwrap();
    let opts = Opts {
        user: "alice",
        password: "wonderland",
        ..Opts::default()
    };
    let mut c = Client::connect_tcp(addr, &opts).unwrap();
    assert_eq!(
        text_row(&c.query_one("user").unwrap()),
        vec![Some("alice".into())]
    );
    assert_eq!(shared.registered.load(Ordering::SeqCst), 1);

    let e = Client::connect_tcp(
        addr,
        &Opts {
            user: "alice",
            password: "nope",
            ..Opts::default()
        },
    )
    .err()
    .unwrap();
    assert_eq!(e.code, 1045);
    assert_eq!(e.state, "28000");
    assert_eq!(
        e.message,
        "Access denied for user 'alice'@'localhost' (using password: YES)"
    );

    let e = Client::connect_tcp(
        addr,
        &Opts {
            user: "alice",
            ..Opts::default()
        },
    )
    .err()
    .unwrap();
    assert_eq!(
        e.message,
        "Access denied for user 'alice'@'localhost' (using password: NO)"
    );

    let e = Client::connect_tcp(
        addr,
        &Opts {
            user: "mallory",
            password: "x",
            ..Opts::default()
        },
    )
    .err()
    .unwrap();
    assert_eq!(e.code, 1045);
    // A passwordless account refuses a client that sends a password.
    let e = Client::connect_tcp(
        addr,
        &Opts {
            user: "root",
            password: "x",
            ..Opts::default()
        },
    )
    .err()
    .unwrap();
    assert_eq!(e.code, 1045);
    // Loopback peers are looked up as "localhost".
    assert!(shared
        .lookup_hosts
        .lock()
        .unwrap()
        .iter()
        .all(|h| h == "localhost"));
    drop(c);
}

#[test]
fn other_auth_plugin_is_switched_to_mysql_native_password() {
    let (h, _) = start(common::config());
    let opts = Opts {
        user: "alice",
        password: "wonderland",
        plugin: "caching_sha2_password",
        ..Opts::default()
    };
    let mut c = Client::connect_tcp(h.local_addr().unwrap(), &opts).unwrap();
    assert!(c.query_one("insert").is_ok());
    let bad = Opts {
        user: "alice",
        password: "wrong",
        plugin: "caching_sha2_password",
        ..Opts::default()
    };
    assert_eq!(
        Client::connect_tcp(h.local_addr().unwrap(), &bad)
            .err()
            .unwrap()
            .code,
        1045
    );
}

#[test]
fn initial_database_is_used_and_unknown_one_is_refused() {
    let (h, _) = start(common::config());
    let addr = h.local_addr().unwrap();
    let mut c = Client::connect_tcp(
        addr,
        &Opts {
            db: Some("shop"),
            ..Opts::default()
        },
    )
    .unwrap();
    assert_eq!(
        text_row(&c.query_one("db").unwrap()),
        vec![Some("shop".into())]
    );
    let e = Client::connect_tcp(
        addr,
        &Opts {
            db: Some("nodb"),
            ..Opts::default()
        },
    )
    .err()
    .unwrap();
    assert_eq!(
        (e.code, e.message.as_str()),
        (1049, "Unknown database 'nodb'")
    );
}

#[test]
fn unix_socket_connections_authenticate_as_localhost() {
    let dir = std::env::temp_dir().join(format!("onelog-server-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mysqld.sock");
    let mut cfg = common::config();
    cfg.bind_address = None;
    cfg.socket = Some(path.clone());
    let (h, shared) = start(cfg);
    assert!(h.local_addr().is_none());
    let mut c = Client::connect_unix(&path, &Opts::default()).unwrap();
    assert!(c.query_one("insert").is_ok());
    assert_eq!(
        shared.lookup_hosts.lock().unwrap().as_slice(),
        ["localhost"]
    );
    drop(c);
    h.shutdown();
    assert!(!path.exists(), "socket file removed at shutdown");
    let _ = std::fs::remove_dir_all(&dir);
}

fn check_text_result_set(deprecate_eof: bool) {
    let (h, _) = start(common::config());
    let mut c = Client::connect_tcp(
        h.local_addr().unwrap(),
        &Opts {
            deprecate_eof,
            ..Opts::default()
        },
    )
    .unwrap();
    let r = c.query_one("select rows").unwrap();
    let Resp::Text {
        columns,
        rows,
        status,
    } = &r
    else {
        panic!("{r:?}")
    };
    assert_eq!(*status, StatusFlags::SERVER_STATUS_AUTOCOMMIT.bits());
    assert_eq!(columns.len(), 15);
    assert_eq!(columns[0].name_str(), "tiny");
    assert_eq!(columns[0].schema_str(), "test");
    assert_eq!(columns[0].table_str(), "t");
    use mysql_common::constants::ColumnType as T;
    let types: Vec<T> = columns.iter().map(|c| c.column_type()).collect();
    assert_eq!(
        types,
        vec![
            T::MYSQL_TYPE_TINY,
            T::MYSQL_TYPE_SHORT,
            T::MYSQL_TYPE_INT24,
            T::MYSQL_TYPE_LONG,
            T::MYSQL_TYPE_LONGLONG,
            T::MYSQL_TYPE_FLOAT,
            T::MYSQL_TYPE_DOUBLE,
            T::MYSQL_TYPE_NEWDECIMAL,
            T::MYSQL_TYPE_VAR_STRING,
            T::MYSQL_TYPE_BLOB,
            T::MYSQL_TYPE_DATE,
            T::MYSQL_TYPE_DATETIME,
            T::MYSQL_TYPE_TIMESTAMP,
            T::MYSQL_TYPE_TIME,
            T::MYSQL_TYPE_YEAR,
        ]
    );
    assert_eq!(columns[7].decimals(), 2);
    assert_eq!(columns[8].character_set(), 45);
    assert!(columns[1]
        .flags()
        .contains(mysql_common::constants::ColumnFlags::UNSIGNED_FLAG));
    assert_eq!(rows.len(), 2);
    let got: Vec<Option<String>> = text_row(&r);
    let want = [
        "-5",
        "65535",
        "-8388608",
        "2147483647",
        "18446744073709551615",
        "1.5",
        "-2.25",
        "-12.50",
        "héllo",
        "\u{0}\u{1}\u{2}\u{FFFD}",
        "2024-02-29",
        "1999-12-31 23:59:58.123456",
        "1970-01-02 01:01:01",
        "-100:02:03.450",
        "2023",
    ];
    assert_eq!(
        got,
        want.iter().map(|s| Some(s.to_string())).collect::<Vec<_>>()
    );
    assert!(rows[1].iter().all(Option::is_none), "second row all NULL");
}

#[test]
fn text_result_set_renders_every_type_with_ok_terminator() {
    check_text_result_set(true);
}

#[test]
fn text_result_set_renders_every_type_with_eof_packets() {
    check_text_result_set(false);
}

#[test]
fn ok_packet_carries_counts_info_and_transaction_status() {
    let (h, _) = start(common::config());
    let mut c = Client::connect_tcp(h.local_addr().unwrap(), &Opts::default()).unwrap();
    let r = c.query_one("insert").unwrap();
    assert_eq!(
        r,
        Resp::Ok {
            affected: 3,
            last_id: 42,
            status: StatusFlags::SERVER_STATUS_AUTOCOMMIT.bits(),
            warnings: 1,
            info: "Records: 3  Duplicates: 0  Warnings: 1".into(),
        }
    );
    let r = c.query_one("begin").unwrap();
    assert!(r.status() & StatusFlags::SERVER_STATUS_IN_TRANS.bits() != 0);
    let r = c.query_one("commit").unwrap();
    assert_eq!(r.status() & StatusFlags::SERVER_STATUS_IN_TRANS.bits(), 0);
}

#[test]
fn multi_statement_results_set_more_results_until_the_last() {
    let (h, _) = start(common::config());
    let mut c = Client::connect_tcp(h.local_addr().unwrap(), &Opts::default()).unwrap();
    let more = StatusFlags::SERVER_MORE_RESULTS_EXISTS.bits();
    let r = c.query("insert; select rows; begin");
    assert_eq!(r.len(), 3);
    assert!(r[0].as_ref().unwrap().status() & more != 0);
    assert!(r[1].as_ref().unwrap().status() & more != 0);
    assert_eq!(r[2].as_ref().unwrap().status() & more, 0);
    // An error ends the batch and is the last result.
    let r = c.query("insert; bogus; insert");
    assert_eq!(r.len(), 2);
    assert_eq!(r[1].as_ref().unwrap_err().code, 1064);
    // The connection is still in step.
    assert!(c.query_one("commit").is_ok());

    // COM_SET_OPTION turns multi-statements off (the reply is a terminator packet).
    c.command(0x1B, &[1, 0]);
    let p = c.read().unwrap();
    assert_eq!(p[0], 0xFE);
    assert_eq!(c.query_one("insert; insert").unwrap_err().code, 1064);
    c.command(0x1B, &[0, 0]);
    c.read().unwrap();
    assert_eq!(c.query("insert; insert").len(), 2);

    let mut single = Client::connect_tcp(
        h.local_addr().unwrap(),
        &Opts {
            multi_statements: false,
            ..Opts::default()
        },
    )
    .unwrap();
    assert_eq!(single.query_one("insert; insert").unwrap_err().code, 1064);
}

#[test]
fn prepared_statement_decodes_every_parameter_type() {
    let (h, shared) = start(common::config());
    let mut c = Client::connect_tcp(h.local_addr().unwrap(), &Opts::default()).unwrap();
    let (id, nparams, cols) = c
        .prepare("insert into t values (?,?,?,?,?,?,?,?,?,?,?,?)")
        .unwrap();
    assert_eq!(nparams, 12);
    assert!(cols.is_empty());
    let params = vec![
        MyValue::NULL,
        MyValue::Int(-7),
        MyValue::UInt(u64::MAX),
        MyValue::Float(2.5),
        MyValue::Double(-1e300),
        MyValue::Bytes(b"bytes\0with nul".to_vec()),
        MyValue::Date(2024, 2, 29, 0, 0, 0, 0),
        MyValue::Date(1999, 12, 31, 23, 59, 58, 0),
        MyValue::Date(1999, 12, 31, 23, 59, 58, 654_321),
        MyValue::Time(true, 2, 3, 4, 5, 0),
        MyValue::Time(false, 0, 1, 2, 3, 999_999),
        MyValue::Bytes(Vec::new()),
    ];
    let r = c.execute(id, &params).unwrap();
    assert!(matches!(r, Resp::Ok { affected: 12, .. }), "{r:?}");
    let got = shared.executed.lock().unwrap().last().unwrap().clone();
    assert_eq!(
        got,
        vec![
            Value::Null,
            Value::Int(-7),
            Value::UInt(u64::MAX),
            Value::Float(2.5),
            Value::Double(-1e300),
            Value::bytes(b"bytes\0with nul"),
            // mysql_common binds its Date as DATETIME.
            Value::DateTime {
                year: 2024,
                month: 2,
                day: 29,
                hour: 0,
                minute: 0,
                second: 0,
                micros: 0
            },
            Value::DateTime {
                year: 1999,
                month: 12,
                day: 31,
                hour: 23,
                minute: 59,
                second: 58,
                micros: 0
            },
            Value::DateTime {
                year: 1999,
                month: 12,
                day: 31,
                hour: 23,
                minute: 59,
                second: 58,
                micros: 654_321
            },
            Value::Time {
                negative: true,
                hours: 51,
                minutes: 4,
                seconds: 5,
                micros: 0
            },
            Value::Time {
                negative: false,
                hours: 1,
                minutes: 2,
                seconds: 3,
                micros: 999_999
            },
            Value::bytes(Vec::new()),
        ]
    );
}

/// Builds a COM_STMT_EXECUTE by hand with explicit type codes.
fn execute_packet(
    id: u32,
    types: &[(u8, bool)],
    nulls: &[bool],
    values: &[u8],
    bound: bool,
) -> Vec<u8> {
    let mut p = vec![0x17];
    p.extend_from_slice(&id.to_le_bytes());
    p.push(0);
    p.extend_from_slice(&1u32.to_le_bytes());
    let mut bitmap = vec![0u8; types.len().div_ceil(8)];
    for (i, &n) in nulls.iter().enumerate() {
        if n {
            bitmap[i / 8] |= 1 << (i % 8);
        }
    }
    p.extend_from_slice(&bitmap);
    p.push(u8::from(bound));
    if bound {
        for &(t, u) in types {
            p.push(t);
            p.push(if u { 0x80 } else { 0 });
        }
    }
    p.extend_from_slice(values);
    p
}

#[test]
fn prepared_statement_parameters_of_each_wire_type_decode_exactly() {
    let (h, shared) = start(common::config());
    let mut c = Client::connect_tcp(h.local_addr().unwrap(), &Opts::default()).unwrap();
    // (type code, unsigned, value bytes, expected)
    let cases: Vec<(u8, bool, Vec<u8>, Value)> = vec![
        (1, false, vec![0xFF], Value::Int(-1)),
        (1, true, vec![0xFF], Value::UInt(255)),
        (2, false, (-2i16).to_le_bytes().to_vec(), Value::Int(-2)),
        (2, true, 65535u16.to_le_bytes().to_vec(), Value::UInt(65535)),
        (3, false, (-3i32).to_le_bytes().to_vec(), Value::Int(-3)),
        (9, true, 70000u32.to_le_bytes().to_vec(), Value::UInt(70000)),
        (
            8,
            false,
            i64::MIN.to_le_bytes().to_vec(),
            Value::Int(i64::MIN),
        ),
        (4, false, 0.5f32.to_le_bytes().to_vec(), Value::Float(0.5)),
        (
            5,
            false,
            0.25f64.to_le_bytes().to_vec(),
            Value::Double(0.25),
        ),
        (13, false, 2155u16.to_le_bytes().to_vec(), Value::Year(2155)),
        (
            246,
            false,
            b"\x05-1.50".to_vec(),
            Value::Decimal("-1.50".into()),
        ),
        (0, false, b"\x033e5".to_vec(), Value::bytes(b"3e5")),
        (15, false, b"\x02ab".to_vec(), Value::bytes(b"ab")),
        (253, false, b"\x00".to_vec(), Value::bytes(Vec::new())),
        (254, false, b"\x01z".to_vec(), Value::bytes(b"z")),
        (
            252,
            false,
            b"\x03\x00\x01\x02".to_vec(),
            Value::bytes(vec![0, 1, 2]),
        ),
        (245, false, b"\x02{}".to_vec(), Value::bytes(b"{}")),
        (6, false, vec![], Value::Null),
        (
            10,
            false,
            vec![4, 0xE8, 0x07, 1, 2],
            Value::Date {
                year: 2024,
                month: 1,
                day: 2,
            },
        ),
        (
            10,
            false,
            vec![0],
            Value::Date {
                year: 0,
                month: 0,
                day: 0,
            },
        ),
        (
            12,
            false,
            vec![7, 0xE8, 0x07, 1, 2, 3, 4, 5],
            Value::DateTime {
                year: 2024,
                month: 1,
                day: 2,
                hour: 3,
                minute: 4,
                second: 5,
                micros: 0,
            },
        ),
        (
            7,
            false,
            vec![11, 0xE8, 0x07, 1, 2, 3, 4, 5, 1, 0, 0, 0],
            Value::DateTime {
                year: 2024,
                month: 1,
                day: 2,
                hour: 3,
                minute: 4,
                second: 5,
                micros: 1,
            },
        ),
        (
            11,
            false,
            vec![12, 1, 1, 0, 0, 0, 2, 3, 4, 0x40, 0x42, 0x0F, 0],
            Value::Time {
                negative: true,
                hours: 26,
                minutes: 3,
                seconds: 4,
                micros: 1_000_000,
            },
        ),
        (
            11,
            false,
            vec![0],
            Value::Time {
                negative: false,
                hours: 0,
                minutes: 0,
                seconds: 0,
                micros: 0,
            },
        ),
    ];
    for (t, unsigned, bytes, want) in cases {
        let (id, n, _) = c.prepare("insert into t values (?)").unwrap();
        assert_eq!(n, 1);
        let p = execute_packet(id, &[(t, unsigned)], &[false], &bytes, true);
        c.command(p[0], &p[1..]);
        let r = c
            .read_result(true)
            .unwrap_or_else(|e| panic!("type {t}: {e:?}"));
        assert!(matches!(r, Resp::Ok { affected: 1, .. }));
        assert_eq!(
            shared.executed.lock().unwrap().last().unwrap(),
            &vec![want],
            "type {t}"
        );
    }
}

#[test]
fn execute_reuses_bound_types_null_bitmap_and_long_data() {
    let (h, shared) = start(common::config());
    let mut c = Client::connect_tcp(h.local_addr().unwrap(), &Opts::default()).unwrap();
    let (id, _, _) = c.prepare("insert into t values (?, ?, ?)").unwrap();
    // First execution binds types: LONG, VAR_STRING, BLOB (blob NULL).
    let types = [(3, false), (253, false), (252, false)];
    let mut v = 10i32.to_le_bytes().to_vec();
    v.extend_from_slice(b"\x02hi");
    let p = execute_packet(id, &types, &[false, false, true], &v, true);
    c.command(p[0], &p[1..]);
    c.read_result(true).unwrap();
    // Second: long data for parameter 2 in two chunks, types not re-sent.
    for chunk in [&b"long "[..], &b"data"[..]] {
        let mut body = id.to_le_bytes().to_vec();
        body.extend_from_slice(&2u16.to_le_bytes());
        body.extend_from_slice(chunk);
        c.command(0x18, &body);
    }
    let mut v = 11i32.to_le_bytes().to_vec();
    v.extend_from_slice(b"\x00");
    let p = execute_packet(id, &types, &[false, false, false], &v, false);
    c.command(p[0], &p[1..]);
    c.read_result(true).unwrap();
    let log = shared.executed.lock().unwrap().clone();
    assert_eq!(
        log[0],
        vec![Value::Int(10), Value::bytes(b"hi"), Value::Null]
    );
    assert_eq!(
        log[1],
        vec![
            Value::Int(11),
            Value::bytes(Vec::new()),
            Value::bytes(b"long data")
        ]
    );

    // Statement id 0xFFFFFFFF means "the last prepared statement" (MariaDB).
    let p = execute_packet(u32::MAX, &types, &[true, true, true], &[], true);
    c.command(p[0], &p[1..]);
    assert!(c.read_result(true).is_ok());

    // A new statement executed without ever binding types: 1210, connection stays usable.
    let (id2, _, _) = c.prepare("insert into t values (?)").unwrap();
    let p = execute_packet(id2, &[(3, false)], &[false], &[], false);
    c.command(p[0], &p[1..]);
    assert_eq!(c.read_result(true).unwrap_err().code, 1210);

    // COM_STMT_RESET answers OK; an unknown id gets 1243.
    c.command(0x1A, &id.to_le_bytes());
    assert!(matches!(c.read_result(false).unwrap(), Resp::Ok { .. }));
    c.command(0x1A, &999u32.to_le_bytes());
    assert_eq!(c.read_result(false).unwrap_err().code, 1243);

    // COM_STMT_CLOSE has no reply; executing the closed statement is 1243.
    c.command(0x19, &id.to_le_bytes());
    let p = execute_packet(id, &types, &[true, true, true], &[], true);
    c.command(p[0], &p[1..]);
    let e = c.read_result(true).unwrap_err();
    assert_eq!(e.code, 1243);
    assert!(c.query_one("insert").is_ok());
}

#[test]
fn binary_result_rows_decode_with_mysql_common() {
    for deprecate_eof in [true, false] {
        let (h, _) = start(common::config());
        let mut c = Client::connect_tcp(
            h.local_addr().unwrap(),
            &Opts {
                deprecate_eof,
                ..Opts::default()
            },
        )
        .unwrap();
        let (id, n, cols) = c.prepare("select * from t where a = ?").unwrap();
        assert_eq!((n, cols.len()), (1, 15));
        let r = c.execute(id, &[MyValue::Int(1)]).unwrap();
        let Resp::Binary { rows, .. } = r else {
            panic!("{r:?}")
        };
        assert_eq!(
            rows[0],
            vec![
                MyValue::Int(-5),
                // mysql_common reads SHORT (and YEAR) as Int even when UNSIGNED; the value is
                // what matters.
                MyValue::Int(65535),
                MyValue::Int(-8_388_608),
                MyValue::Int(2_147_483_647),
                MyValue::UInt(u64::MAX),
                MyValue::Float(1.5),
                MyValue::Double(-2.25),
                MyValue::Bytes(b"-12.50".to_vec()),
                MyValue::Bytes("héllo".as_bytes().to_vec()),
                MyValue::Bytes(vec![0, 1, 2, 255]),
                MyValue::Date(2024, 2, 29, 0, 0, 0, 0),
                MyValue::Date(1999, 12, 31, 23, 59, 58, 123_456),
                MyValue::Date(1970, 1, 2, 1, 1, 1, 0),
                MyValue::Time(true, 4, 4, 2, 3, 450_000),
                MyValue::Int(2023),
            ]
        );
        assert!(rows[1].iter().all(|v| *v == MyValue::NULL));
    }
}

#[test]
fn simple_commands_answer_like_mariadb() {
    let (h, _) = start(common::config());
    let mut c = Client::connect_tcp(h.local_addr().unwrap(), &Opts::default()).unwrap();
    // COM_PING
    c.command(0x0E, &[]);
    assert!(matches!(c.read_result(false).unwrap(), Resp::Ok { .. }));
    // COM_INIT_DB
    c.command(0x02, b"shop");
    assert!(c.read_result(false).is_ok());
    assert_eq!(
        text_row(&c.query_one("db").unwrap()),
        vec![Some("shop".into())]
    );
    c.command(0x02, b"nodb");
    assert_eq!(c.read_result(false).unwrap_err().code, 1049);
    // COM_STATISTICS: a bare string.
    c.command(0x09, &[]);
    let s = String::from_utf8(c.read().unwrap()).unwrap();
    assert!(
        s.starts_with("Uptime: ") && s.contains("Threads: 1") && s.contains("Questions: "),
        "{s}"
    );
    // COM_FIELD_LIST: column definitions with a default value, then the terminator.
    c.command(0x04, b"t\0%");
    for name in ["tiny", "ushort"] {
        let p = c.read().unwrap();
        let col: mysql_common::packets::Column = mysql_common::io::ParseBuf(&p).parse(()).unwrap();
        assert_eq!(col.name_str(), name);
        assert_eq!(*p.last().unwrap(), 0xFB, "NULL default value");
    }
    assert_eq!(c.read().unwrap()[0], 0xFE);
    c.command(0x04, b"missing\0");
    assert_eq!(c.read_result(false).unwrap_err().code, 1146);
    // Unknown command.
    c.command(0x05, &[]);
    let e = c.read_result(false).unwrap_err();
    assert_eq!((e.code, e.message.as_str()), (1047, "Unknown command"));
    // COM_STMT_FETCH: no cursors.
    c.command(0x1C, &[1, 0, 0, 0, 1, 0, 0, 0]);
    assert_eq!(c.read_result(false).unwrap_err().code, 1421);
    // COM_RESET_CONNECTION
    c.query_one("begin").unwrap();
    c.command(0x1F, &[]);
    let r = c.read_result(false).unwrap();
    assert_eq!(r.status() & StatusFlags::SERVER_STATUS_IN_TRANS.bits(), 0);
    // COM_QUIT closes without a reply.
    c.command(0x01, &[]);
    assert!(c.is_closed());
}

#[test]
fn change_user_reauthenticates_against_the_connection_scramble() {
    let (h, _) = start(common::config());
    let mut c = Client::connect_tcp(h.local_addr().unwrap(), &Opts::default()).unwrap();
    let nonce = c.greeting.nonce();
    let mut body = b"alice\0".to_vec();
    let resp =
        mysql_common::auth::plugins::mysql_native_password::scramble_native(&nonce, b"wonderland")
            .unwrap();
    body.push(20);
    body.extend_from_slice(&resp);
    body.extend_from_slice(b"shop\0");
    body.extend_from_slice(&45u16.to_le_bytes());
    body.extend_from_slice(b"mysql_native_password\0");
    c.command(0x11, &body);
    assert!(matches!(c.read_result(false).unwrap(), Resp::Ok { .. }));
    assert_eq!(
        text_row(&c.query_one("user").unwrap()),
        vec![Some("alice".into())]
    );
    assert_eq!(
        text_row(&c.query_one("db").unwrap()),
        vec![Some("shop".into())]
    );
    // Wrong password: 1045 and the connection closes.
    let mut body = b"alice\0".to_vec();
    body.push(20);
    body.extend_from_slice(&[7; 20]);
    body.push(0);
    c.command(0x11, &body);
    assert_eq!(c.read_result(false).unwrap_err().code, 1045);
    assert!(c.is_closed());
}

#[test]
fn max_connections_refuses_the_next_client_with_1040() {
    let mut cfg = common::config();
    cfg.max_connections = 2;
    let (h, _) = start(cfg);
    let addr = h.local_addr().unwrap();
    let a = Client::connect_tcp(addr, &Opts::default()).unwrap();
    let mut b = Client::connect_tcp(addr, &Opts::default()).unwrap();
    let e = Client::connect_tcp(addr, &Opts::default()).err().unwrap();
    assert_eq!(
        (e.code, e.state.as_str(), e.message.as_str()),
        (1040, "08004", "Too many connections")
    );
    // Quitting frees the slot before the server closes the socket.
    let mut a = a;
    a.command(0x01, &[]);
    assert!(a.is_closed());
    b.query_one("insert").unwrap();
    let mut c = Client::connect_tcp(addr, &Opts::default()).unwrap();
    assert!(c.query_one("insert").is_ok());
}

#[test]
fn packet_over_max_allowed_packet_gets_1153_and_closes_only_that_connection() {
    let mut cfg = common::config();
    cfg.max_allowed_packet = 1024;
    let (h, _) = start(cfg);
    let addr = h.local_addr().unwrap();
    let mut other = Client::connect_tcp(addr, &Opts::default()).unwrap();
    let mut c = Client::connect_tcp(addr, &Opts::default()).unwrap();
    let sql = format!("len {}", "x".repeat(2000));
    let r = c.query(&sql);
    let e = r[0].as_ref().unwrap_err();
    assert_eq!(e.code, 1153);
    assert_eq!(
        e.message,
        "Got a packet bigger than 'max_allowed_packet' bytes"
    );
    assert!(c.is_closed());
    // Just under the limit works.
    let sql = format!("len {}", "x".repeat(1019));
    assert_eq!(
        text_row(&other.query_one(&sql).unwrap()),
        vec![Some("1019".into())]
    );
}

#[test]
fn payloads_across_the_16mib_boundary_are_split_and_merged() {
    let (h, _) = start(common::config());
    let mut c = Client::connect_tcp(h.local_addr().unwrap(), &Opts::default()).unwrap();
    const MAX: usize = 0xFF_FFFF;
    // Requests: the command byte plus "len " makes the payload exactly MAX, MAX+1, MAX-1.
    for body in [MAX - 5, MAX - 4, MAX - 6] {
        let sql = format!("len {}", "y".repeat(body));
        assert_eq!(
            text_row(&c.query_one(&sql).unwrap()),
            vec![Some(body.to_string())]
        );
    }
    // Responses: a row of a 16 MiB blob is split by the server and merged by the client.
    for n in [MAX, MAX + 10] {
        let r = c.query_one(&format!("big {n}")).unwrap();
        let Resp::Text { rows, .. } = r else { panic!() };
        let v = rows[0][0].as_ref().unwrap();
        assert_eq!(v.len(), n);
        assert!(v.iter().enumerate().all(|(i, &b)| b == (i % 253) as u8));
    }
}

#[test]
fn malformed_packets_close_only_the_offending_connection() {
    let (h, _) = start(common::config());
    let addr = h.local_addr().unwrap();
    let mut good = Client::connect_tcp(addr, &Opts::default()).unwrap();

    // Wrong sequence id: 1156.
    let mut c = Client::connect_tcp(addr, &Opts::default()).unwrap();
    c.seq = 5;
    c.write_raw(b"\x03insert");
    c.seq = 6;
    let p = c.read().unwrap();
    assert_eq!(common::parse_err_packet(&p, c.caps).code, 1156);
    assert!(c.is_closed());

    // Empty command packet: 1835.
    let mut c = Client::connect_tcp(addr, &Opts::default()).unwrap();
    c.seq = 0;
    c.write_raw(&[]);
    assert_eq!(c.read_result(false).unwrap_err().code, 1835);
    assert!(c.is_closed());

    // COM_STMT_EXECUTE whose string parameter lies about its length: 1835.
    let mut c = Client::connect_tcp(addr, &Opts::default()).unwrap();
    let (id, _, _) = c.prepare("insert into t values (?)").unwrap();
    let p = execute_packet(
        id,
        &[(253, false)],
        &[false],
        &[0xFC, 0xFF, 0xFF, b'a'],
        true,
    );
    c.command(p[0], &p[1..]);
    assert_eq!(c.read_result(true).unwrap_err().code, 1835);
    assert!(c.is_closed());

    // Truncated packet then close: the server just drops the connection.
    let mut s = TcpStream::connect(addr).unwrap();
    let mut seq = 0;
    common::read_raw(&mut s, &mut seq).unwrap();
    s.write_all(&[100, 0, 0, 1, 1, 2, 3]).unwrap();
    drop(s);

    // Garbage instead of a handshake response: 1043.
    let mut s = TcpStream::connect(addr).unwrap();
    let mut seq = 0;
    common::read_raw(&mut s, &mut seq).unwrap();
    s.write_all(&[3, 0, 0, 1, 0xFF, 0xFF, 0xFF]).unwrap();
    seq = 2;
    let p = common::read_raw(&mut s, &mut seq).unwrap();
    assert_eq!(
        common::parse_err_packet(&p, CapabilityFlags::CLIENT_PROTOCOL_41).code,
        1043
    );

    // Pre-4.1 handshake response: 1043.
    let mut s = TcpStream::connect(addr).unwrap();
    let mut seq = 0;
    common::read_raw(&mut s, &mut seq).unwrap();
    s.write_all(&[7, 0, 0, 1, 0, 0, 0, 0, 0, b'u', 0]).unwrap();
    seq = 2;
    let p = common::read_raw(&mut s, &mut seq).unwrap();
    assert_eq!(
        common::parse_err_packet(&p, CapabilityFlags::CLIENT_PROTOCOL_41).code,
        1043
    );

    // The well-behaved connection never noticed.
    assert!(good.query_one("insert").is_ok());
    assert!(matches!(
        good.query_one("select rows").unwrap(),
        Resp::Text { .. }
    ));
}

#[test]
fn idle_connection_is_closed_after_wait_timeout() {
    let mut cfg = common::config();
    cfg.wait_timeout = 1;
    let (h, shared) = start(cfg);
    let mut c = Client::connect_tcp(h.local_addr().unwrap(), &Opts::default()).unwrap();
    assert!(c.query_one("insert").is_ok());
    // Blocks until the server gives up on the idle connection.
    assert!(c.is_closed());
    drop(h);
    assert_eq!(shared.registered.load(Ordering::SeqCst), 0);
}

#[test]
fn shutdown_closes_idle_connections_and_joins_their_threads() {
    let (h, shared) = start(common::config());
    let addr = h.local_addr().unwrap();
    let mut a = Client::connect_tcp(addr, &Opts::default()).unwrap();
    let mut b = Client::connect_tcp(addr, &Opts::default()).unwrap();
    a.query_one("insert").unwrap();
    assert_eq!(h.connection_count(), 2);
    h.shutdown();
    assert_eq!(shared.registered.load(Ordering::SeqCst), 0);
    assert!(a.is_closed());
    assert!(b.is_closed());
}

#[test]
fn shutdown_statement_answers_ok_and_signals_the_handle() {
    let (h, _) = start(common::config());
    let addr = h.local_addr().unwrap();
    let mut idle = Client::connect_tcp(addr, &Opts::default()).unwrap();
    let mut c = Client::connect_tcp(addr, &Opts::default()).unwrap();
    assert!(matches!(c.query_one("shutdown").unwrap(), Resp::Ok { .. }));
    h.wait_shutdown_request();
    assert!(h.shutdown_requested());
    assert!(c.is_closed());
    assert!(idle.is_closed());
    h.shutdown();
}

#[test]
fn killed_connection_is_refused_its_next_command() {
    let (h, _) = start(common::config());
    let mut c = Client::connect_tcp(h.local_addr().unwrap(), &Opts::default()).unwrap();
    // COM_PROCESS_KILL is forwarded to the session as "KILL <id>"; the test backend marks
    // every registration killed for it. The next command is pipelined behind it, so it is
    // already waiting when the server looks for it and gets 1927 as its reply.
    c.command(0x0C, &7u32.to_le_bytes());
    c.command(0x03, b"insert");
    c.seq = 1;
    assert!(matches!(c.read_result(false).unwrap(), Resp::Ok { .. }));
    c.seq = 1;
    let e = c.read_result(false).unwrap_err();
    assert_eq!(
        (e.code, e.state.as_str(), e.message.as_str()),
        (1927, "70100", "Connection was killed")
    );
    assert!(c.is_closed());
}

#[test]
fn killed_idle_connection_is_closed_without_waiting_for_a_command() {
    let (h, shared) = start(common::config());
    let addr = h.local_addr().unwrap();
    let mut idle = Client::connect_tcp(addr, &Opts::default()).unwrap();
    let mut killer = Client::connect_tcp(addr, &Opts::default()).unwrap();
    assert_eq!(shared.registered.load(Ordering::SeqCst), 2);
    killer.command(0x0C, &1u32.to_le_bytes());
    assert!(matches!(
        killer.read_result(false).unwrap(),
        Resp::Ok { .. }
    ));
    // The idle connection notices at its next idle tick and is closed.
    assert!(idle.is_closed());
    drop(h);
    assert_eq!(shared.registered.load(Ordering::SeqCst), 0);
}
