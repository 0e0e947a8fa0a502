//! The protocol layer renders text-protocol values itself (into the connection's buffer, with
//! no allocation per value); the SQL layer has `onelog_sql::render::text` for the same job
//! (CONCAT, CAST). This checks the two agree, so a client sees the same text either way.

use onelog_binlog::{ColumnType, Value};
use onelog_server::value::render_text;
use onelog_sql::Column;
use proptest::prelude::*;

fn col(t: ColumnType, decimals: u8) -> Column {
    Column {
        name: "c".into(),
        org_name: "c".into(),
        table: String::new(),
        org_table: String::new(),
        db: String::new(),
        column_type: t,
        flags: 0,
        length: 0,
        decimals,
        charset: 63,
    }
}

fn ours(v: &Value, c: &Column) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    render_text(v, c, &mut out).then_some(out)
}

fn value_and_column() -> impl Strategy<Value = (Value, Column)> {
    prop_oneof![
        any::<i64>().prop_map(|i| (Value::Int(i), col(ColumnType::LongLong, 0))),
        any::<u64>().prop_map(|u| (Value::UInt(u), col(ColumnType::LongLong, 0))),
        any::<f64>()
            .prop_filter("finite", |d| d.is_finite())
            .prop_map(|d| (Value::Double(d), col(ColumnType::Double, 31))),
        any::<f32>()
            .prop_filter("finite", |d| d.is_finite())
            .prop_map(|f| (Value::Float(f), col(ColumnType::Float, 31))),
        (1000u16..9999, 1u8..13, 1u8..29).prop_map(|(year, month, day)| (
            Value::Date { year, month, day },
            col(ColumnType::Date, 0)
        )),
        (
            1000u16..9999,
            1u8..13,
            1u8..29,
            0u8..24,
            0u8..60,
            0u8..60,
            0u32..1_000_000,
            0u8..7
        )
            .prop_map(|(year, month, day, hour, minute, second, micros, fsp)| {
                let micros = micros / 10u32.pow(6 - u32::from(fsp)) * 10u32.pow(6 - u32::from(fsp));
                (
                    Value::DateTime {
                        year,
                        month,
                        day,
                        hour,
                        minute,
                        second,
                        micros,
                    },
                    col(ColumnType::DateTime2, fsp),
                )
            }),
        (any::<u32>(), 0u8..7).prop_map(|(secs, fsp)| (
            Value::Timestamp { secs, micros: 0 },
            col(ColumnType::Timestamp2, fsp)
        )),
        (any::<bool>(), 0u16..839, 0u8..60, 0u8..60, 0u8..7).prop_map(
            |(negative, hours, minutes, seconds, fsp)| (
                Value::Time {
                    negative,
                    hours,
                    minutes,
                    seconds,
                    micros: 0
                },
                col(ColumnType::Time2, fsp)
            )
        ),
        (1901u16..2156).prop_map(|y| (Value::Year(y), col(ColumnType::Year, 0))),
        "-?[0-9]{1,10}\\.[0-9]{2}"
            .prop_map(|s| (Value::Decimal(s), col(ColumnType::NewDecimal, 2))),
        proptest::collection::vec(any::<u8>(), 0..20)
            .prop_map(|b| (Value::bytes(b), col(ColumnType::Blob, 0))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn protocol_text_rendering_agrees_with_the_sql_layer((v, c) in value_and_column()) {
        prop_assert_eq!(
            ours(&v, &c).map(|b| String::from_utf8_lossy(&b).into_owned()),
            onelog_sql::render::text(&v, &c).map(|b| String::from_utf8_lossy(&b).into_owned()),
            "{:?} in {:?}", v, c.column_type
        );
    }
}

#[test]
fn null_renders_as_sql_null_in_both() {
    let c = col(ColumnType::Long, 0);
    assert_eq!(ours(&Value::Null, &c), None);
    assert_eq!(onelog_sql::render::text(&Value::Null, &c), None);
}
