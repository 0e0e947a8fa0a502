//! The client's side of the dump protocol as bytes: COM_REGISTER_SLAVE and COM_BINLOG_DUMP
//! bodies (after the command byte), and the semi-sync ACK packet
//! (REPLICATION_FACTS.md §1.3, §1.4, §1.10).
//!
//! Owns [`RegisterSlave`], [`DumpRequest`] and [`SemiSyncAck`] and their decoders. Decoders
//! never trust a length beyond the bytes given and never panic: a short or inconsistent
//! packet is a [`Malformed`] error naming the field.
//!
//! Quirks kept on purpose: a dump's file name is read as a C string (python-mysql-replication
//! sends three NUL bytes for "no name"), and trailing bytes after the REGISTER fields are
//! ignored (MariaDB reads only what it knows).

use onelog_protocol::wire::{Malformed, Reader};

/// `BINLOG_DUMP_NON_BLOCK`: send what there is, then EOF.
pub const DUMP_NON_BLOCK: u16 = 1;
/// `BINLOG_SEND_ANNOTATE_ROWS_EVENT`: the reader wants Annotate_rows events.
pub const DUMP_SEND_ANNOTATE_ROWS: u16 = 2;

/// Magic byte of a semi-sync header and of an ACK packet.
pub const SEMI_SYNC_MAGIC: u8 = 0xEF;

/// Longest file name MariaDB accepts in a REGISTER or ACK packet (`FN_REFLEN`).
pub const FN_REFLEN: usize = 512;

/// A COM_REGISTER_SLAVE body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegisterSlave {
    pub server_id: u32,
    pub host: String,
    pub user: String,
    pub password: String,
    pub port: u16,
    pub master_id: u32,
}

fn short_string(r: &mut Reader<'_>, what: &'static str) -> Result<String, Malformed> {
    let n = r.u8(what)?;
    let b = r.bytes(n as usize, what)?;
    Ok(String::from_utf8_lossy(b).into_owned())
}

impl RegisterSlave {
    pub fn decode(body: &[u8]) -> Result<RegisterSlave, Malformed> {
        let mut r = Reader::new(body);
        let server_id = r.u32("server_id")?;
        let host = short_string(&mut r, "report_host")?;
        let user = short_string(&mut r, "report_user")?;
        let password = short_string(&mut r, "report_password")?;
        let port = r.u16("report_port")?;
        // Rank: always 0, unused.
        let _rank = r.u32("replication_rank")?;
        let master_id = r.u32("master_id")?;
        Ok(RegisterSlave {
            server_id,
            host,
            user,
            password,
            port,
            master_id,
        })
    }
}

/// A COM_BINLOG_DUMP body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DumpRequest {
    pub position: u32,
    pub flags: u16,
    pub server_id: u32,
    /// Empty: the oldest file (file/offset mode), or ignored (GTID mode).
    pub file: String,
}

impl DumpRequest {
    pub fn decode(body: &[u8]) -> Result<DumpRequest, Malformed> {
        let mut r = Reader::new(body);
        let position = r.u32("binlog position")?;
        let flags = r.u16("flags")?;
        let server_id = r.u32("server_id")?;
        let rest = r.rest();
        let name = rest.split(|&b| b == 0).next().unwrap_or_default();
        if name.len() > FN_REFLEN {
            return Err(Malformed {
                what: "binlog file name longer than FN_REFLEN",
                offset: 10,
            });
        }
        Ok(DumpRequest {
            position,
            flags,
            server_id,
            file: String::from_utf8_lossy(name).into_owned(),
        })
    }

    /// The reader wants EOF at the end instead of waiting (flag, or server_id 0 as MariaDB).
    pub fn non_blocking(&self) -> bool {
        self.flags & DUMP_NON_BLOCK != 0 || self.server_id == 0
    }

    pub fn wants_annotate(&self) -> bool {
        self.flags & DUMP_SEND_ANNOTATE_ROWS != 0
    }
}

/// A semi-sync ACK: the end position of the acknowledged event in `file`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SemiSyncAck {
    pub position: u64,
    pub file: String,
}

impl SemiSyncAck {
    /// Decodes an ACK packet's payload; `Err` with MariaDB's reason otherwise.
    pub fn decode(payload: &[u8]) -> Result<SemiSyncAck, &'static str> {
        match payload.first() {
            Some(&SEMI_SYNC_MAGIC) => {}
            _ => return Err("Read semi-sync reply magic number error"),
        }
        if payload.len() < 9 {
            return Err("Read semi-sync reply length error");
        }
        let mut pos = [0u8; 8];
        pos.copy_from_slice(&payload[1..9]);
        let name = &payload[9..];
        if name.len() >= FN_REFLEN {
            return Err("Read semi-sync reply binlog file length too large");
        }
        Ok(SemiSyncAck {
            position: u64::from_le_bytes(pos),
            file: String::from_utf8_lossy(name).into_owned(),
        })
    }

    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(SEMI_SYNC_MAGIC);
        out.extend_from_slice(&self.position.to_le_bytes());
        out.extend_from_slice(self.file.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_as_captured() {
        // `15 02000000 00 00 00 fb33 00000000 00000000` without the command byte.
        let body = [2, 0, 0, 0, 0, 0, 0, 0xfb, 0x33, 0, 0, 0, 0, 0, 0, 0, 0];
        let r = RegisterSlave::decode(&body).unwrap();
        assert_eq!(r.server_id, 2);
        assert_eq!(r.port, 13307);
        assert!(r.host.is_empty());
        assert!(RegisterSlave::decode(&body[..10]).is_err());
        // A host length beyond the packet.
        assert!(RegisterSlave::decode(&[2, 0, 0, 0, 200, b'a']).is_err());
    }

    #[test]
    fn dump_request_names() {
        let mut b = vec![];
        b.extend_from_slice(&0x73bu32.to_le_bytes());
        b.extend_from_slice(&2u16.to_le_bytes());
        b.extend_from_slice(&2u32.to_le_bytes());
        b.extend_from_slice(b"master-bin.000001");
        let d = DumpRequest::decode(&b).unwrap();
        assert_eq!(
            (d.position, d.flags, d.server_id, d.file.as_str()),
            (0x73b, 2, 2, "master-bin.000001")
        );
        assert!(d.wants_annotate() && !d.non_blocking());
        // python-mysql-replication: three NULs for no name.
        let mut p = b[..10].to_vec();
        p.extend_from_slice(&[0, 0, 0]);
        assert_eq!(DumpRequest::decode(&p).unwrap().file, "");
        assert!(DumpRequest::decode(&b[..9]).is_err());
        // server_id 0 means non-blocking.
        let mut z = b.clone();
        z[6..10].copy_from_slice(&0u32.to_le_bytes());
        assert!(DumpRequest::decode(&z).unwrap().non_blocking());
    }

    #[test]
    fn ack_round_trip_and_errors() {
        let a = SemiSyncAck {
            position: 2277,
            file: "master-bin.000001".into(),
        };
        let mut b = vec![];
        a.encode(&mut b);
        assert_eq!(SemiSyncAck::decode(&b).unwrap(), a);
        assert!(SemiSyncAck::decode(&b[..8]).is_err());
        assert!(SemiSyncAck::decode(&[0x00; 12]).is_err());
    }
}
