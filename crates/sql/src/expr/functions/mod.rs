//! The built-in scalar functions.

use std::cmp::Ordering;

use onelog_binlog::Value;

use super::coerce::compare;
use super::env::Env;
use super::ir::{BinOp, Func};
use super::numeric::*;
use super::ops::binary_values;
use super::temporal::*;
use super::text::{sql_text, text_of};
use crate::error::SqlError;
use crate::wide::Wide;

pub(super) fn str_val(v: Vec<u8>) -> Value {
    Value::Bytes(v)
}

pub(super) fn lossy(v: &Value) -> String {
    String::from_utf8_lossy(&text_of(v)).into_owned()
}

pub(super) fn call(f: Func, mut v: Vec<Value>, env: &Env) -> Result<Value, SqlError> {
    let any_null = v.contains(&Value::Null);
    let null_in = |fs: &[Func]| fs.contains(&f) && any_null;
    if null_in(&[
        Func::Concat,
        Func::Length,
        Func::CharLength,
        Func::Upper,
        Func::Lower,
        Func::Substring,
        Func::Left,
        Func::Right,
        Func::Trim,
        Func::LTrim,
        Func::RTrim,
        Func::TrimLeading,
        Func::TrimTrailing,
        Func::Replace,
        Func::Repeat,
        Func::Reverse,
        Func::LPad,
        Func::RPad,
        Func::Abs,
        Func::Round,
        Func::Truncate,
        Func::Floor,
        Func::Ceil,
        Func::Mod,
        Func::Greatest,
        Func::Least,
        Func::DateFormat,
        Func::Hex,
        Func::Pow,
        Func::Sqrt,
        Func::Sign,
        Func::Year,
        Func::Month,
        Func::Day,
        Func::Hour,
        Func::Minute,
        Func::Second,
        Func::Date,
        Func::Ascii,
        Func::Locate,
        Func::Instr,
        Func::Space,
        Func::FromUnixtime,
    ]) {
        return Ok(Value::Null);
    }
    let int = |x: &Value| to_i128(x).unwrap_or(0);
    Ok(match f {
        Func::Concat => {
            let parts: Vec<Vec<u8>> = v.iter().map(text_of).collect();
            let len: u64 = parts.iter().map(|p| p.len() as u64).sum();
            if !env.session.guard.string_fits("concat", len) {
                return Ok(Value::Null);
            }
            str_val(parts.concat())
        }
        Func::ConcatWs => {
            if v[0] == Value::Null {
                return Ok(Value::Null);
            }
            let sep = text_of(&v[0]);
            let parts: Vec<Vec<u8>> = v[1..]
                .iter()
                .filter(|x| **x != Value::Null)
                .map(text_of)
                .collect();
            let len: u64 = parts.iter().map(|p| p.len() as u64).sum::<u64>()
                + (sep.len() as u64).saturating_mul(parts.len().saturating_sub(1) as u64);
            if !env.session.guard.string_fits("concat_ws", len) {
                return Ok(Value::Null);
            }
            str_val(parts.join(&sep[..]))
        }
        Func::Length => Value::Int(text_of(&v[0]).len() as i64),
        Func::CharLength => Value::Int(lossy(&v[0]).chars().count() as i64),
        Func::Upper => str_val(lossy(&v[0]).to_uppercase().into_bytes()),
        Func::Lower => str_val(lossy(&v[0]).to_lowercase().into_bytes()),
        Func::Substring => {
            let s: Vec<char> = lossy(&v[0]).chars().collect();
            let n = s.len() as i128;
            let pos = int(&v[1]);
            let start = if pos > 0 {
                pos - 1
            } else if pos < 0 {
                n + pos
            } else {
                return Ok(str_val(Vec::new()));
            };
            if start < 0 || start >= n {
                return Ok(str_val(Vec::new()));
            }
            let len = if v.len() > 2 { int(&v[2]).max(0) } else { n };
            let end = (start + len).min(n);
            str_val(
                s[start as usize..end as usize]
                    .iter()
                    .collect::<String>()
                    .into_bytes(),
            )
        }
        Func::Left | Func::Right => {
            let s: Vec<char> = lossy(&v[0]).chars().collect();
            let k = (int(&v[1]).max(0) as usize).min(s.len());
            let part: String = if f == Func::Left {
                s[..k].iter().collect()
            } else {
                s[s.len() - k..].iter().collect()
            };
            str_val(part.into_bytes())
        }
        Func::Trim | Func::LTrim | Func::RTrim | Func::TrimLeading | Func::TrimTrailing => {
            let s = text_of(&v[0]);
            let what = if v.len() > 1 {
                text_of(&v[1])
            } else {
                b" ".to_vec()
            };
            let mut a = 0;
            let mut b = s.len();
            let lead = matches!(f, Func::Trim | Func::LTrim | Func::TrimLeading);
            let trail = matches!(f, Func::Trim | Func::RTrim | Func::TrimTrailing);
            if !what.is_empty() {
                if lead {
                    while b - a >= what.len() && s[a..].starts_with(&what) {
                        a += what.len();
                    }
                }
                if trail {
                    while b - a >= what.len() && s[..b].ends_with(&what) {
                        b -= what.len();
                    }
                }
            }
            str_val(s[a..b].to_vec())
        }
        Func::Replace => {
            let s = lossy(&v[0]);
            let from = lossy(&v[1]);
            let to = lossy(&v[2]);
            if from.is_empty() {
                str_val(s.into_bytes())
            } else {
                let hits = s.matches(from.as_str()).count() as u64;
                let len = (s.len() as u64 - hits * from.len() as u64)
                    .saturating_add(hits.saturating_mul(to.len() as u64));
                if !env.session.guard.string_fits("replace", len) {
                    return Ok(Value::Null);
                }
                str_val(s.replace(&from, &to).into_bytes())
            }
        }
        Func::Repeat => {
            let n = int(&v[1]).clamp(0, i128::from(u32::MAX)) as u64;
            let s = text_of(&v[0]);
            if s.is_empty() || n == 0 {
                return Ok(str_val(Vec::new()));
            }
            if !env
                .session
                .guard
                .string_fits("repeat", (s.len() as u64).saturating_mul(n))
            {
                return Ok(Value::Null);
            }
            str_val(s.repeat(n as usize))
        }
        Func::Reverse => str_val(lossy(&v[0]).chars().rev().collect::<String>().into_bytes()),
        Func::LPad | Func::RPad => {
            let s: Vec<char> = lossy(&v[0]).chars().collect();
            let n = int(&v[1]);
            if n < 0 {
                return Ok(Value::Null);
            }
            let name = if f == Func::LPad { "lpad" } else { "rpad" };
            // At least one byte per character: a count past the cap cannot fit.
            if !env
                .session
                .guard
                .string_fits(name, n.min(i128::from(u64::MAX)) as u64)
            {
                return Ok(Value::Null);
            }
            let n = n as usize;
            let pad: Vec<char> = lossy(&v[2]).chars().collect();
            if s.len() >= n {
                return Ok(str_val(s[..n].iter().collect::<String>().into_bytes()));
            }
            if pad.is_empty() {
                return Ok(Value::Null);
            }
            let fill: String = pad.iter().cycle().take(n - s.len()).collect();
            let body: String = s.iter().collect();
            if !env
                .session
                .guard
                .string_fits(name, (fill.len() + body.len()) as u64)
            {
                return Ok(Value::Null);
            }
            str_val(
                if f == Func::LPad {
                    fill + &body
                } else {
                    body + &fill
                }
                .into_bytes(),
            )
        }
        Func::NullIf => {
            if compare(&v[0], &v[1]) == Some(Ordering::Equal) {
                Value::Null
            } else {
                v.swap_remove(0)
            }
        }
        Func::Abs => match num_of(&v[0]) {
            Some(Num::Int(i)) if i == i128::from(i64::MIN) && matches!(v[0], Value::Int(_)) => {
                return Err(out_of_range("BIGINT", &format!("abs({})", sql_text(&v[0]))))
            }
            Some(Num::Int(i)) => int_value(i.abs())?,
            Some(Num::Dec(d)) => Value::Decimal(
                Dec {
                    m: d.m.abs(),
                    s: d.s,
                }
                .to_string(),
            ),
            Some(Num::Dbl(d)) => Value::Double(d.abs()),
            None => Value::Null,
        },
        Func::Round | Func::Truncate => {
            let places = if v.len() > 1 { int(&v[1]) } else { 0 }.clamp(-81, 30);
            match num_of(&v[0]) {
                Some(Num::Dbl(d)) => {
                    let p = 10f64.powi(places as i32);
                    let x = d * p;
                    Value::Double(
                        if f == Func::Round {
                            x.round()
                        } else {
                            x.trunc()
                        } / p,
                    )
                }
                Some(n) => {
                    let d = num_dec(n).unwrap_or(Dec::from_int(0));
                    let r = round_dec(d, places as i64, f == Func::Round).unwrap_or(d);
                    if matches!(n, Num::Int(_)) {
                        wide_int_value(r.rescale(0).map_or(Wide::ZERO, |x| x.m))
                    } else {
                        Value::Decimal(r.to_string())
                    }
                }
                None => Value::Null,
            }
        }
        Func::Floor | Func::Ceil => match num_of(&v[0]) {
            Some(Num::Int(i)) => int_value(i)?,
            Some(Num::Dec(d)) => {
                let floor = d.floor_or_trunc(true).unwrap_or(Wide::ZERO);
                let exact = Dec { m: floor, s: 0 }.cmp(d) == Ordering::Equal;
                wide_int_value(if f == Func::Floor || exact {
                    floor
                } else {
                    floor.checked_add(Wide::from_i128(1)).unwrap_or(floor)
                })
            }
            Some(Num::Dbl(d)) => Value::Double(if f == Func::Floor {
                d.floor()
            } else {
                d.ceil()
            }),
            None => Value::Null,
        },
        Func::Mod => binary_values(BinOp::Mod, &v[0], &v[1])?,
        Func::Greatest | Func::Least => {
            let mut best = v[0].clone();
            for x in &v[1..] {
                let o = compare(x, &best).unwrap_or(Ordering::Equal);
                if (f == Func::Greatest && o == Ordering::Greater)
                    || (f == Func::Least && o == Ordering::Less)
                {
                    best = x.clone();
                }
            }
            best
        }
        Func::Now => {
            let (s, us) = env.session.statement_time();
            let fsp = v.first().map_or(0, |x| int(x).clamp(0, 6) as u32);
            let unit = 10u32.pow(6 - fsp);
            datetime_from_unix(s, us - us % unit)
        }
        Func::CurDate => {
            let (s, _) = env.session.statement_time();
            let (y, m, d) = civil_from_days(s.div_euclid(86400));
            Value::Date {
                year: y as u16,
                month: m as u8,
                day: d as u8,
            }
        }
        Func::CurTime => {
            let (s, _) = env.session.statement_time();
            let r = s.rem_euclid(86400);
            Value::Time {
                negative: false,
                hours: (r / 3600) as u16,
                minutes: (r / 60 % 60) as u8,
                seconds: (r % 60) as u8,
                micros: 0,
            }
        }
        Func::UnixTimestamp => match v.first() {
            None => Value::Int(env.session.statement_time().0),
            Some(Value::Null) => Value::Null,
            Some(x) => match unix_of(x) {
                Some((s, 0)) => Value::Int(s),
                Some((s, us)) => Value::Decimal(
                    Dec {
                        m: Wide::from_i128(i128::from(s) * 1_000_000 + i128::from(us)),
                        s: 6,
                    }
                    .to_string(),
                ),
                None => Value::Int(0),
            },
        },
        Func::FromUnixtime => datetime_from_unix(int(&v[0]) as i64, 0),
        Func::DateFormat => match date_format(&v[0], &text_of(&v[1])) {
            Some(b) => str_val(b),
            None => Value::Null,
        },
        Func::Database => match &env.session.current_db {
            Some(d) => str_val(d.as_bytes().to_vec()),
            None => Value::Null,
        },
        Func::User | Func::CurrentUser => {
            str_val(format!("{}@{}", env.session.user, env.session.host).into_bytes())
        }
        Func::Version => str_val(env.session.server.config.version.as_bytes().to_vec()),
        Func::ConnectionId => Value::UInt(u64::from(env.session.connection_id)),
        Func::LastInsertId => match v.first() {
            Some(x) => x.clone(),
            None => Value::UInt(env.session.last_insert_id),
        },
        Func::FoundRows => Value::UInt(env.session.found_rows),
        Func::RowCount => Value::Int(env.session.row_count),
        Func::IsNull => Value::Int((v[0] == Value::Null) as i64),
        Func::Hex => match &v[0] {
            Value::Bytes(b) => str_val(
                b.iter()
                    .map(|x| format!("{x:02X}"))
                    .collect::<String>()
                    .into_bytes(),
            ),
            other => str_val(format!("{:X}", int(other) as u64).into_bytes()),
        },
        Func::Pow => {
            let r = to_f64(&v[0])
                .unwrap_or(0.0)
                .powf(to_f64(&v[1]).unwrap_or(0.0));
            if r.is_finite() {
                Value::Double(r)
            } else {
                Value::Null
            }
        }
        Func::Sqrt => {
            let x = to_f64(&v[0]).unwrap_or(0.0);
            if x < 0.0 {
                Value::Null
            } else {
                Value::Double(x.sqrt())
            }
        }
        Func::Sign => Value::Int(match to_f64(&v[0]) {
            Some(x) if x > 0.0 => 1,
            Some(x) if x < 0.0 => -1,
            _ => 0,
        }),
        Func::Pi => Value::Double(std::f64::consts::PI),
        Func::Rand => {
            let (s, us) = now_unix();
            let mut x = (s as u64) ^ (u64::from(us) << 20) ^ 0x9E37_79B9_7F4A_7C15;
            x ^= x >> 33;
            x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
            x ^= x >> 33;
            Value::Double((x >> 11) as f64 / (1u64 << 53) as f64)
        }
        Func::Sleep => {
            // Interruptible: KILL, max_statement_time and a client disconnect end it.
            let secs = to_f64(&v[0]).unwrap_or(0.0).clamp(0.0, 3600.0);
            let guard = &env.session.guard;
            guard.set_state("User sleep");
            guard.sleep(std::time::Duration::from_secs_f64(secs))?;
            guard.set_state("Sending data");
            Value::Int(0)
        }
        Func::Year | Func::Month | Func::Day | Func::Hour | Func::Minute | Func::Second => {
            if let (
                Func::Hour | Func::Minute | Func::Second,
                Value::Time {
                    hours,
                    minutes,
                    seconds,
                    ..
                },
            ) = (f, &v[0])
            {
                return Ok(Value::Int(match f {
                    Func::Hour => i64::from(*hours),
                    Func::Minute => i64::from(*minutes),
                    _ => i64::from(*seconds),
                }));
            }
            match date_parts(&v[0]) {
                Some((y, m, d, h, mi, s, _)) => Value::Int(match f {
                    Func::Year => y,
                    Func::Month => i64::from(m),
                    Func::Day => i64::from(d),
                    Func::Hour => i64::from(h),
                    Func::Minute => i64::from(mi),
                    _ => i64::from(s),
                }),
                None => Value::Null,
            }
        }
        Func::Date => match date_parts(&v[0]) {
            Some((y, m, d, ..)) => Value::Date {
                year: y as u16,
                month: m as u8,
                day: d as u8,
            },
            None => Value::Null,
        },
        Func::Ascii => Value::Int(i64::from(text_of(&v[0]).first().copied().unwrap_or(0))),
        Func::Locate | Func::Instr => {
            let (needle, hay) = if f == Func::Locate {
                (lossy(&v[0]), lossy(&v[1]))
            } else {
                (lossy(&v[1]), lossy(&v[0]))
            };
            Value::Int(match hay.find(&needle) {
                Some(i) => hay[..i].chars().count() as i64 + 1,
                None => 0,
            })
        }
        Func::Space => {
            let n = int(&v[0]).clamp(0, i128::from(u64::MAX)) as u64;
            if !env.session.guard.string_fits("space", n) {
                return Ok(Value::Null);
            }
            str_val(vec![b' '; n as usize])
        }
        Func::Coalesce | Func::IfNull | Func::If => Value::Null,
    })
}
