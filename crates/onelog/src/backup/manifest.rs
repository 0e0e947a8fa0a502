//! `backup.info`, the manifest of a backup directory (docs/BACKUP.md, "Backup format").
//!
//! Owns [`Manifest`] (what a backup holds: its LSN range, the GTID state at both ends, the
//! checkpoint of a full backup, every file with its size and CRC32C, and for a log piece its
//! segment and LSN range), its text form ([`Manifest::encode`]) and parser
//! ([`Manifest::parse`]). The text is one `key value` per line; the last line is `crc32c` of
//! every byte before it, so a torn or edited manifest is refused, never half-read.
//!
//! Invariants: `encode` then `parse` gives back the same manifest; a manifest is written last,
//! after every file it names is complete and synced (`target.rs`), so a directory whose
//! manifest parses is a complete backup; files are named by relative paths without `..`.

use std::fmt::Write as _;

use onelog_binlog::{Gtid, GtidState};
use onelog_log::Lsn;

/// File name of the manifest inside a backup directory.
pub const MANIFEST: &str = "backup.info";
const FIRST_LINE: &str = "onelog-backup 1";

/// One file of a backup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileEntry {
    /// Relative path inside the backup (`checkpoints/...`, `binlog/...`).
    pub path: String,
    pub bytes: u64,
    /// CRC32C of the whole file.
    pub crc: u32,
    /// A log piece: the segment's header block followed by the records of `[from, to)`.
    pub piece: Option<Piece>,
}

/// What part of a segment a log piece holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    pub number: u64,
    pub from: Lsn,
    pub to: Lsn,
}

/// A backup's manifest (module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// False for an incremental backup.
    pub full: bool,
    pub server_version: String,
    /// When the backup ended, UTC (`2026-11-25T23:59:59Z`).
    pub created: String,
    /// Full backups: the checkpoint's LSN and its file (under `checkpoints/`); None when the
    /// server had written none (the log then starts at LSN 0).
    pub checkpoint: Option<(Lsn, String)>,
    /// Full: the checkpoint's LSN; incremental: the base backup's `end_lsn`.
    pub start_lsn: Lsn,
    /// The durable LSN the backup ends at.
    pub end_lsn: Lsn,
    pub start_state: GtidState,
    pub end_state: GtidState,
    pub files: Vec<FileEntry>,
}

fn state_text(s: &GtidState) -> String {
    let v: Vec<String> = s.entries().iter().map(Gtid::to_string).collect();
    v.join(",")
}

fn parse_state(v: &str) -> Result<GtidState, String> {
    let mut entries = Vec::new();
    for part in v.split(',').filter(|p| !p.is_empty()) {
        entries.push(
            part.parse::<Gtid>()
                .map_err(|_| format!("bad GTID {part:?}"))?,
        );
    }
    Ok(GtidState::from_entries(entries))
}

impl Manifest {
    /// The manifest's text, its CRC line last.
    pub fn encode(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "{FIRST_LINE}");
        let kind = if self.full { "full" } else { "incremental" };
        let _ = writeln!(s, "kind {kind}");
        let _ = writeln!(s, "server_version {}", self.server_version);
        let _ = writeln!(s, "created {}", self.created);
        if let Some((lsn, file)) = &self.checkpoint {
            let _ = writeln!(s, "checkpoint {lsn} {file}");
        }
        let _ = writeln!(s, "start_lsn {}", self.start_lsn);
        let _ = writeln!(s, "end_lsn {}", self.end_lsn);
        let _ = writeln!(s, "start_gtid_state {}", state_text(&self.start_state));
        let _ = writeln!(s, "end_gtid_state {}", state_text(&self.end_state));
        let _ = writeln!(s, "end_gtid_pos {}", self.end_state.pos());
        for f in &self.files {
            let _ = write!(s, "file {} {} {:08x}", f.path, f.bytes, f.crc);
            if let Some(p) = f.piece {
                let _ = write!(s, " segment {} {} {}", p.number, p.from, p.to);
            }
            s.push('\n');
        }
        let crc = crc32c::crc32c(s.as_bytes());
        let _ = writeln!(s, "crc32c {crc:08x}");
        s
    }

    /// Parses a manifest's text; the error says what is wrong (the caller names the file).
    pub fn parse(text: &str) -> Result<Manifest, String> {
        let body_end = text
            .trim_end_matches('\n')
            .rfind('\n')
            .map(|i| i + 1)
            .ok_or("too short")?;
        let (body, last) = text.split_at(body_end);
        let stored = last
            .trim_end()
            .strip_prefix("crc32c ")
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .ok_or("the last line is not its crc32c (a torn or truncated manifest)")?;
        let computed = crc32c::crc32c(body.as_bytes());
        if stored != computed {
            return Err(format!(
                "CRC32C mismatch: stored {stored:08x}, computed {computed:08x}"
            ));
        }
        let mut lines = body.lines();
        if lines.next() != Some(FIRST_LINE) {
            return Err(format!("the first line is not {FIRST_LINE:?}"));
        }
        let mut m = Manifest {
            full: true,
            server_version: String::new(),
            created: String::new(),
            checkpoint: None,
            start_lsn: 0,
            end_lsn: 0,
            start_state: GtidState::new(),
            end_state: GtidState::new(),
            files: Vec::new(),
        };
        for line in lines {
            m.parse_line(line)
                .map_err(|e| format!("line {line:?}: {e}"))?;
        }
        if !m.full && m.checkpoint.is_some() {
            return Err("an incremental backup has no checkpoint".into());
        }
        if m.full && m.checkpoint.is_none() && m.start_lsn != 0 {
            return Err("a full backup without a checkpoint starts at LSN 0".into());
        }
        if m.end_lsn < m.start_lsn {
            return Err("end_lsn is before start_lsn".into());
        }
        Ok(m)
    }

    fn parse_line(&mut self, line: &str) -> Result<(), String> {
        let (key, value) = line.split_once(' ').unwrap_or((line, ""));
        let num = |v: &str| v.parse::<u64>().map_err(|_| format!("bad number {v:?}"));
        match key {
            "kind" => {
                self.full = match value {
                    "full" => true,
                    "incremental" => false,
                    _ => return Err("unknown kind".into()),
                }
            }
            "server_version" => self.server_version = value.to_owned(),
            "created" => self.created = value.to_owned(),
            "checkpoint" => {
                let (lsn, file) = value.split_once(' ').ok_or("needs LSN and file")?;
                check_rel_path(file)?;
                self.checkpoint = Some((num(lsn)?, file.to_owned()));
            }
            "start_lsn" => self.start_lsn = num(value)?,
            "end_lsn" => self.end_lsn = num(value)?,
            "start_gtid_state" => self.start_state = parse_state(value)?,
            "end_gtid_state" => self.end_state = parse_state(value)?,
            "end_gtid_pos" => {}
            "file" => self.files.push(parse_file(value)?),
            _ => return Err("unknown key".into()),
        }
        Ok(())
    }
}

fn parse_file(value: &str) -> Result<FileEntry, String> {
    let w: Vec<&str> = value.split(' ').collect();
    let num = |v: &str| v.parse::<u64>().map_err(|_| format!("bad number {v:?}"));
    let (path, bytes, crc) = match w.as_slice() {
        [p, b, c, ..] => (
            *p,
            num(b)?,
            u32::from_str_radix(c, 16).map_err(|_| "bad crc")?,
        ),
        _ => return Err("needs path, size and crc32c".into()),
    };
    check_rel_path(path)?;
    let piece = match &w[3..] {
        [] => None,
        ["segment", n, from, to] => {
            let p = Piece {
                number: num(n)?,
                from: num(from)?,
                to: num(to)?,
            };
            if p.to < p.from {
                return Err("a piece ends before it starts".into());
            }
            Some(p)
        }
        _ => return Err("unknown file attributes".into()),
    };
    Ok(FileEntry {
        path: path.to_owned(),
        bytes,
        crc,
        piece,
    })
}

/// A path inside the backup: relative, no `..`, no empty component.
fn check_rel_path(p: &str) -> Result<(), String> {
    if p.is_empty() || p.starts_with('/') || p.split('/').any(|c| c.is_empty() || c == "..") {
        return Err(format!("{p:?} is not a path inside the backup"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Manifest {
        Manifest {
            full: true,
            server_version: "10.11.9-MariaDB-onelog".into(),
            created: "2026-11-25T23:00:00Z".into(),
            checkpoint: Some((4096, "checkpoints/checkpoint-0000000000001000.ckpt".into())),
            start_lsn: 4096,
            end_lsn: 9000,
            start_state: GtidState::from_entries([Gtid::new(0, 2, 3), Gtid::new(0, 1, 7)]),
            end_state: GtidState::from_entries([Gtid::new(0, 2, 3), Gtid::new(0, 1, 9)]),
            files: vec![
                FileEntry {
                    path: "checkpoints/checkpoint-0000000000001000.ckpt".into(),
                    bytes: 100,
                    crc: 0xdeadbeef,
                    piece: None,
                },
                FileEntry {
                    path: "binlog/binlog-000001.olog".into(),
                    bytes: 9096,
                    crc: 1,
                    piece: Some(Piece {
                        number: 1,
                        from: 0,
                        to: 9000,
                    }),
                },
            ],
        }
    }

    #[test]
    fn round_trips() {
        let m = sample();
        let text = m.encode();
        assert!(text.contains("end_gtid_pos 0-1-9\n"), "{text}");
        assert_eq!(Manifest::parse(&text).unwrap(), m);
    }

    #[test]
    fn a_changed_or_truncated_manifest_is_refused() {
        let text = sample().encode();
        let edited = text.replace("end_lsn 9000", "end_lsn 9001");
        assert!(Manifest::parse(&edited).unwrap_err().contains("CRC32C"));
        let cut = &text[..text.len() - 12];
        assert!(Manifest::parse(cut).is_err());
        let mut m = sample();
        m.files[1].path = "../etc/passwd".into();
        assert!(Manifest::parse(&m.encode())
            .unwrap_err()
            .contains("not a path inside"));
    }
}
