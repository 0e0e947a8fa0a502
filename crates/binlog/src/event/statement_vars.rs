//! The events that carry a statement's context in statement-based (and MIXED) replication:
//! Intvar (type 5: LAST_INSERT_ID / INSERT_ID), Rand (13: the RAND() seeds) and User_var (14:
//! a user variable the statement reads). A replica applies them to the session that runs the
//! Query event that follows.
//!
//! Layouts (MariaDB `log_event.h`, all little-endian, after the 19-byte header, before the
//! CRC32): Intvar `u8 type (1 LAST_INSERT_ID, 2 INSERT_ID), u64 value`; Rand `u64 seed1, u64
//! seed2`; User_var `u32 name_len, name, u8 is_null`, then unless null `u8 value_type
//! (0 STRING, 1 REAL, 2 INT, 4 DECIMAL), u32 charset, u32 value_len, value[, u8 flags
//! (1 = UNSIGNED)]`.
//!
//! Invariants: decoding never panics and refuses any length that runs past the event.

use crate::error::DecodeError;
use crate::event::{check_event, HEADER_LEN};

/// Intvar type of LAST_INSERT_ID().
pub const INTVAR_LAST_INSERT_ID: u8 = 1;
/// Intvar type of the next AUTO_INCREMENT value (INSERT_ID).
pub const INTVAR_INSERT_ID: u8 = 2;

pub const INTVAR: u8 = 5;
pub const RAND: u8 = 13;
pub const USER_VAR: u8 = 14;

/// The context one statement-based event sets.
#[derive(Clone, Debug, PartialEq)]
pub enum StatementVar {
    Intvar { kind: u8, value: u64 },
    Rand { seed1: u64, seed2: u64 },
    UserVar { name: String, value: UserValue },
}

/// A user variable's value as the primary logged it.
#[derive(Clone, Debug, PartialEq)]
pub enum UserValue {
    Null,
    /// Bytes in the charset numbered `charset`.
    String {
        bytes: Vec<u8>,
        charset: u32,
    },
    Real(f64),
    Int {
        value: i64,
        unsigned: bool,
    },
    /// The decimal in MariaDB's binary form: `precision, scale, bytes`.
    Decimal {
        precision: u8,
        scale: u8,
        bytes: Vec<u8>,
    },
}

fn take<'a>(b: &mut &'a [u8], n: usize, what: &str) -> Result<&'a [u8], DecodeError> {
    if b.len() < n {
        return Err(DecodeError::new(
            "statement variable event",
            0,
            format!("{what} runs past the event"),
        ));
    }
    let (h, t) = b.split_at(n);
    *b = t;
    Ok(h)
}

fn u32le(b: &mut &[u8], what: &str) -> Result<u32, DecodeError> {
    let s = take(b, 4, what)?;
    Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

fn u64le(b: &mut &[u8], what: &str) -> Result<u64, DecodeError> {
    let s = take(b, 8, what)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(s);
    Ok(u64::from_le_bytes(a))
}

/// Decodes an Intvar, Rand or User_var event (whole, CRC32 included); None for other types.
pub fn decode_statement_var(ev: &[u8]) -> Result<Option<StatementVar>, DecodeError> {
    let (h, ev) = check_event(ev)?;
    let mut b = &ev[HEADER_LEN..ev.len() - 4];
    let v = match h.event_type {
        INTVAR => {
            let kind = take(&mut b, 1, "Intvar type")?[0];
            let value = u64le(&mut b, "Intvar value")?;
            StatementVar::Intvar { kind, value }
        }
        RAND => StatementVar::Rand {
            seed1: u64le(&mut b, "Rand seed1")?,
            seed2: u64le(&mut b, "Rand seed2")?,
        },
        USER_VAR => {
            let n = u32le(&mut b, "User_var name length")? as usize;
            let name = String::from_utf8_lossy(take(&mut b, n, "User_var name")?).into_owned();
            let is_null = take(&mut b, 1, "User_var null flag")?[0] != 0;
            let value = if is_null {
                UserValue::Null
            } else {
                user_value(&mut b)?
            };
            StatementVar::UserVar { name, value }
        }
        _ => return Ok(None),
    };
    Ok(Some(v))
}

fn user_value(b: &mut &[u8]) -> Result<UserValue, DecodeError> {
    let ty = take(b, 1, "User_var type")?[0];
    let charset = u32le(b, "User_var charset")?;
    let len = u32le(b, "User_var value length")? as usize;
    let bytes = take(b, len, "User_var value")?;
    let flags = b.first().copied().unwrap_or(0);
    Ok(match ty {
        0 => UserValue::String {
            bytes: bytes.to_vec(),
            charset,
        },
        1 if len == 8 => {
            let mut a = [0u8; 8];
            a.copy_from_slice(bytes);
            UserValue::Real(f64::from_le_bytes(a))
        }
        2 if len == 8 => {
            let mut a = [0u8; 8];
            a.copy_from_slice(bytes);
            UserValue::Int {
                value: i64::from_le_bytes(a),
                unsigned: flags & 1 != 0,
            }
        }
        4 if len >= 2 => UserValue::Decimal {
            precision: bytes[0],
            scale: bytes[1],
            bytes: bytes[2..].to_vec(),
        },
        _ => {
            return Err(DecodeError::new(
                "User_var event",
                0,
                format!("value type {ty} with {len} bytes"),
            ))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{write_event, EventHeader};

    fn event(t: u8, body: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let h = EventHeader {
            timestamp: 1,
            event_type: t,
            server_id: 1,
            event_size: 0,
            log_pos: 0,
            flags: 0,
        };
        write_event(&mut out, h, body);
        out
    }

    #[test]
    fn decodes_each_kind_and_refuses_short_bodies() {
        let mut b = vec![INTVAR_INSERT_ID];
        b.extend_from_slice(&42u64.to_le_bytes());
        assert_eq!(
            decode_statement_var(&event(INTVAR, &b)).unwrap(),
            Some(StatementVar::Intvar { kind: 2, value: 42 })
        );
        let mut b = 7u64.to_le_bytes().to_vec();
        b.extend_from_slice(&9u64.to_le_bytes());
        assert_eq!(
            decode_statement_var(&event(RAND, &b)).unwrap(),
            Some(StatementVar::Rand { seed1: 7, seed2: 9 })
        );
        let mut b = 1u32.to_le_bytes().to_vec();
        b.extend_from_slice(b"a");
        b.push(0);
        b.push(2);
        b.extend_from_slice(&63u32.to_le_bytes());
        b.extend_from_slice(&8u32.to_le_bytes());
        b.extend_from_slice(&(-5i64).to_le_bytes());
        b.push(0);
        assert_eq!(
            decode_statement_var(&event(USER_VAR, &b)).unwrap(),
            Some(StatementVar::UserVar {
                name: "a".into(),
                value: UserValue::Int {
                    value: -5,
                    unsigned: false
                }
            })
        );
        let mut b = 1u32.to_le_bytes().to_vec();
        b.extend_from_slice(b"a");
        b.push(1);
        assert_eq!(
            decode_statement_var(&event(USER_VAR, &b)).unwrap(),
            Some(StatementVar::UserVar {
                name: "a".into(),
                value: UserValue::Null
            })
        );
        assert!(decode_statement_var(&event(INTVAR, &[2, 1, 2])).is_err());
        assert!(decode_statement_var(&event(USER_VAR, &[200, 0, 0, 0, b'x'])).is_err());
    }
}
