//! Decoders for client packets: the handshake response, COM_CHANGE_USER, COM_STMT_EXECUTE and
//! COM_STMT_SEND_LONG_DATA (the simple commands are decoded inline by the connection).
//!
//! Pure functions from a payload to a typed request, so the fuzz target and the property tests
//! drive them directly. Invariants: they never panic and never trust a length; anything that does
//! not fit is a [`Malformed`] naming the field; and they borrow from the payload instead of
//! copying, except for parameter values, which become owned `Value`s for the SQL layer.

use mysql_common::constants::CapabilityFlags;
use onelog_sql::Value;

use crate::value::decode_param;
use crate::wire::{Malformed, Reader};

/// One connection attribute: (name, value).
pub type Attribute<'a> = (&'a [u8], &'a [u8]);

/// Protocol::HandshakeResponse41.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandshakeResponse<'a> {
    pub capabilities: CapabilityFlags,
    pub max_packet_size: u32,
    pub charset: u8,
    /// MariaDB extended capabilities (the last 4 filler bytes), 0 from MySQL clients.
    pub mariadb_capabilities: u32,
    pub user: &'a [u8],
    pub auth_response: &'a [u8],
    pub database: Option<&'a [u8]>,
    pub auth_plugin: Option<&'a [u8]>,
    pub attributes: Vec<Attribute<'a>>,
}

/// The client asked to switch to TLS (an SSLRequest: capabilities with CLIENT_SSL and nothing
/// after the filler). onelog does not offer TLS.
pub fn is_ssl_request(payload: &[u8]) -> bool {
    payload.len() == 32
        && CapabilityFlags::from_bits_truncate(u32::from_le_bytes([
            payload[0], payload[1], payload[2], payload[3],
        ]))
        .contains(CapabilityFlags::CLIENT_SSL)
}

fn decode_attributes<'a>(r: &mut Reader<'a>) -> Result<Vec<Attribute<'a>>, Malformed> {
    let mut attrs = Vec::new();
    if r.is_empty() {
        return Ok(attrs);
    }
    let block = r.lenenc_bytes("connection attributes length")?;
    let mut a = Reader::new(block);
    while !a.is_empty() {
        let k = a.lenenc_bytes("connection attribute name")?;
        let v = a.lenenc_bytes("connection attribute value")?;
        attrs.push((k, v));
    }
    Ok(attrs)
}

/// Decodes a HandshakeResponse41. Clients without CLIENT_PROTOCOL_41 are malformed here.
pub fn decode_handshake_response(payload: &[u8]) -> Result<HandshakeResponse<'_>, Malformed> {
    let mut r = Reader::new(payload);
    let capabilities = CapabilityFlags::from_bits_truncate(r.u32("capability flags")?);
    if !capabilities.contains(CapabilityFlags::CLIENT_PROTOCOL_41) {
        return Err(Malformed {
            what: "client without CLIENT_PROTOCOL_41",
            offset: 0,
        });
    }
    let max_packet_size = r.u32("max packet size")?;
    let charset = r.u8("character set")?;
    let filler = r.bytes(23, "reserved filler")?;
    let mariadb_capabilities = u32::from_le_bytes([filler[19], filler[20], filler[21], filler[22]]);
    let user = r.nul_bytes("user name")?;
    let auth_response =
        if capabilities.contains(CapabilityFlags::CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA) {
            r.lenenc_bytes("auth response")?
        } else if capabilities.contains(CapabilityFlags::CLIENT_SECURE_CONNECTION) {
            let n = r.u8("auth response length")?;
            r.bytes(usize::from(n), "auth response")?
        } else {
            r.nul_bytes("auth response")?
        };
    let database =
        if capabilities.contains(CapabilityFlags::CLIENT_CONNECT_WITH_DB) && !r.is_empty() {
            Some(r.nul_or_rest())
        } else {
            None
        };
    let auth_plugin = if capabilities.contains(CapabilityFlags::CLIENT_PLUGIN_AUTH) && !r.is_empty()
    {
        Some(r.nul_or_rest())
    } else {
        None
    };
    let attributes = if capabilities.contains(CapabilityFlags::CLIENT_CONNECT_ATTRS) {
        decode_attributes(&mut r)?
    } else {
        Vec::new()
    };
    Ok(HandshakeResponse {
        capabilities,
        max_packet_size,
        charset,
        mariadb_capabilities,
        user,
        auth_response,
        database: database.filter(|d| !d.is_empty()),
        auth_plugin,
        attributes,
    })
}

/// COM_CHANGE_USER (the payload after the command byte).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeUser<'a> {
    pub user: &'a [u8],
    pub auth_response: &'a [u8],
    pub database: Option<&'a [u8]>,
    pub charset: Option<u16>,
    pub auth_plugin: Option<&'a [u8]>,
}

/// Decodes COM_CHANGE_USER's body under the negotiated capabilities.
pub fn decode_change_user(body: &[u8], caps: CapabilityFlags) -> Result<ChangeUser<'_>, Malformed> {
    let mut r = Reader::new(body);
    let user = r.nul_bytes("user name")?;
    let auth_response = if caps.contains(CapabilityFlags::CLIENT_SECURE_CONNECTION) {
        let n = r.u8("auth response length")?;
        r.bytes(usize::from(n), "auth response")?
    } else {
        r.nul_bytes("auth response")?
    };
    let database = r.nul_or_rest();
    let charset = if r.remaining() >= 2 {
        Some(r.u16("character set")?)
    } else {
        None
    };
    let auth_plugin = if caps.contains(CapabilityFlags::CLIENT_PLUGIN_AUTH) && !r.is_empty() {
        Some(r.nul_or_rest())
    } else {
        None
    };
    if caps.contains(CapabilityFlags::CLIENT_CONNECT_ATTRS) {
        decode_attributes(&mut r)?;
    }
    Ok(ChangeUser {
        user,
        auth_response,
        database: (!database.is_empty()).then_some(database),
        charset,
        auth_plugin,
    })
}

/// The statement id a COM_STMT_EXECUTE / SEND_LONG_DATA / CLOSE / RESET body starts with.
pub fn stmt_id(body: &[u8]) -> Result<u32, Malformed> {
    Reader::new(body).u32("statement id")
}

/// A parameter type as bound by the client: type code and UNSIGNED flag.
pub type ParamType = (u8, bool);

/// A decoded COM_STMT_EXECUTE.
#[derive(Debug, Clone, PartialEq)]
pub struct Execute {
    pub stmt_id: u32,
    /// Cursor flags (onelog opens no cursors; results are always sent in full).
    pub flags: u8,
    pub params: Vec<Value>,
    /// The types the client bound with this execution (`new_params_bound_flag` = 1), to be
    /// remembered for later executions that omit them.
    pub new_types: Option<Vec<ParamType>>,
}

/// Decodes COM_STMT_EXECUTE's body for a statement with `num_params` parameters.
/// `bound_types` are the types remembered from an earlier execution; `long_data[i]` is the data
/// sent for parameter `i` with COM_STMT_SEND_LONG_DATA (that parameter is then not in the packet).
pub fn decode_execute(
    body: &[u8],
    num_params: usize,
    bound_types: Option<&[ParamType]>,
    long_data: &[Option<Vec<u8>>],
) -> Result<Execute, Malformed> {
    let mut r = Reader::new(body);
    let stmt_id = r.u32("statement id")?;
    let flags = r.u8("cursor flags")?;
    let _iterations = r.u32("iteration count")?;
    let mut params = Vec::with_capacity(num_params.min(body.len() + 1));
    let mut new_types = None;
    if num_params > 0 {
        let null_bitmap = r.bytes(num_params.div_ceil(8), "null bitmap")?;
        let bound = r.u8("new params bound flag")?;
        let types: Vec<ParamType> = if bound == 1 {
            let raw = r.bytes(num_params * 2, "parameter types")?;
            let t: Vec<ParamType> = raw
                .chunks_exact(2)
                .map(|c| (c[0], c[1] & 0x80 != 0))
                .collect();
            new_types = Some(t.clone());
            t
        } else {
            match bound_types {
                Some(t) if t.len() == num_params => t.to_vec(),
                _ => {
                    return Err(Malformed {
                        what: "parameter types never bound",
                        offset: r.position(),
                    })
                }
            }
        };
        for (i, &(t, unsigned)) in types.iter().enumerate() {
            if let Some(Some(data)) = long_data.get(i) {
                params.push(Value::bytes(&data[..]));
            } else if null_bitmap[i / 8] & (1 << (i % 8)) != 0 {
                params.push(Value::Null);
            } else {
                params.push(decode_param(&mut r, t, unsigned)?);
            }
        }
    }
    Ok(Execute {
        stmt_id,
        flags,
        params,
        new_types,
    })
}

/// COM_STMT_SEND_LONG_DATA: (statement id, parameter index, data chunk).
pub fn decode_send_long_data(body: &[u8]) -> Result<(u32, u16, &[u8]), Malformed> {
    let mut r = Reader::new(body);
    let id = r.u32("statement id")?;
    let param = r.u16("parameter index")?;
    Ok((id, param, r.rest()))
}

/// Runs every client-packet decoder over `data` (the fuzz target's and the property test's
/// entry point): the first byte picks a parameter count and a chunk size, the rest is read as
/// a stream of framed packets, and each payload goes through each decoder. Must never panic.
pub fn exercise_decoders(data: &[u8]) {
    use std::io::{Cursor, Read, Write};

    struct ReadOnly(Cursor<Vec<u8>>);
    impl Read for ReadOnly {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.0.read(buf)
        }
    }
    impl Write for ReadOnly {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let num_params = usize::from(sel & 0x0F);
    let max_chunk = usize::from(sel >> 4) + 1;
    let mut stream = crate::packet::PacketStream::with_max_chunk(
        ReadOnly(Cursor::new(rest.to_vec())),
        1 << 16,
        max_chunk,
    );
    let types: Vec<ParamType> = (0..num_params)
        .map(|i| (rest.get(i).copied().unwrap_or(253), i % 2 == 0))
        .collect();
    let long_data: Vec<Option<Vec<u8>>> = (0..num_params)
        .map(|i| (i % 3 == 1).then(|| vec![1, 2]))
        .collect();
    let mut payload = Vec::new();
    for _ in 0..16 {
        if stream.read_packet(&mut payload).is_err() {
            break;
        }
        let _ = decode_handshake_response(&payload);
        let _ = is_ssl_request(&payload);
        let _ = decode_change_user(&payload, CapabilityFlags::all());
        let _ = decode_change_user(&payload, CapabilityFlags::empty());
        let _ = decode_execute(&payload, num_params, None, &[]);
        let _ = decode_execute(&payload, num_params, Some(&types), &long_data);
        let _ = decode_send_long_data(&payload);
        let _ = stmt_id(&payload);
        // The replication commands' bodies and a semi-sync ACK.
        let _ = onelog_replication::source::RegisterSlave::decode(&payload);
        let _ = onelog_replication::source::DumpRequest::decode(&payload);
        let _ = onelog_replication::source::SemiSyncAck::decode(&payload);
        // What a replica reads from its primary: the greeting and an error packet.
        let _ = onelog_protocol::response::parse_handshake(&payload);
        let _ = onelog_protocol::response::parse_err(&payload);
        let mut r = Reader::new(&payload);
        while !r.is_empty() {
            let Ok(t) = r.u8("type") else { break };
            if decode_param(&mut r, t, t & 1 == 1).is_err() {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn decoders_never_panic_on_arbitrary_bytes(
            b in proptest::collection::vec(any::<u8>(), 0..200),
            n in 0usize..20,
        ) {
            let _ = decode_handshake_response(&b);
            let _ = decode_change_user(&b, CapabilityFlags::all());
            let _ = decode_change_user(&b, CapabilityFlags::empty());
            let _ = decode_execute(&b, n, None, &[]);
            let types = vec![(253u8, false); n];
            let _ = decode_execute(&b, n, Some(&types), &[]);
            let _ = decode_send_long_data(&b);
            let _ = is_ssl_request(&b);
        }

        #[test]
        fn fuzz_entry_never_panics(b in proptest::collection::vec(any::<u8>(), 0..600)) {
            exercise_decoders(&b);
        }

        #[test]
        fn fuzz_entry_never_panics_on_framed_execute_packets(
            sel in any::<u8>(),
            body in proptest::collection::vec(any::<u8>(), 0..300),
        ) {
            // A well-framed packet so the decoders, not the framing, see the random bytes.
            let mut data = vec![sel];
            let len = body.len().min(usize::from(sel >> 4));
            data.extend_from_slice(&[len as u8, 0, 0, 0]);
            data.extend_from_slice(&body[..len]);
            data.extend_from_slice(&[0, 0, 0, 1]);
            exercise_decoders(&data);
        }
    }

    #[test]
    fn execute_without_bound_types_is_malformed() {
        // stmt id 1, flags 0, iterations 1, bitmap 0, bound 0
        let body = [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0];
        let e = decode_execute(&body, 1, None, &[]).unwrap_err();
        assert_eq!(e.what, "parameter types never bound");
    }

    #[test]
    fn execute_reuses_remembered_types_and_long_data() {
        // 2 params, bitmap 0, bound 0; param 0 from long data; param 1 a LONG = 7
        let body = [9, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 7, 0, 0, 0];
        let types = [(252u8, false), (3u8, false)];
        let long = [Some(b"blob".to_vec()), None];
        let e = decode_execute(&body, 2, Some(&types), &long).unwrap();
        assert_eq!(e.stmt_id, 9);
        assert_eq!(e.params, vec![Value::bytes(b"blob"), Value::Int(7)]);
        assert_eq!(e.new_types, None);
    }
}
