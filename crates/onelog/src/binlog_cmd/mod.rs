//! `onelog binlog [--verbose|-v] [--start-gtid=LIST] [--stop-gtid=LIST] [--to-binlog DIR] FILE...`
//!
//! Decodes onelog log segments (`binlog-NNNNNN.olog`, the on-disk storage) and classic
//! MariaDB binlog files (`binlog.NNNNNN`, told apart by their magic) into mariadb-binlog's
//! text (`--base64-output=decode-rows`; `-v` adds the `### INSERT ...` pseudo-SQL of row
//! events), or, with `--to-binlog DIR`, writes the classic view of the given segments
//! (`onelog_log::view`: segment N is `binlog.NNNNNN`, the very file the server's SHOW BINLOG
//! EVENTS, dump and mirror show) in DIR, with `binlog.index`, for MariaDB tools and replicas.
//! Printing a segment shows its on-disk offsets (`# LSN ... at offset N`), which are not
//! binlog positions; export it with `--to-binlog` to see the view's positions.
//!
//! Owns the argument parsing of the subcommand ([`parse_args`]), the walk over the files
//! ([`run`]), GTID filtering ([`GtidFilter`]) and the export ([`export`]); the text itself is
//! [`print`]'s.
//!
//! Invariants: files are only read (segments with positioned reads, never through the `Log`,
//! which a running server holds); everything that decoded before a problem is printed (or
//! exported, and the export closed cleanly) before the problem is reported as
//! `onelog binlog: FILE: offset N: what` with exit status 1; no input makes it panic.

pub mod export;
pub mod print;

use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use onelog_binlog::event::gtid::GtidEvent;
use onelog_binlog::event::{event_type, BINLOG_MAGIC};
use onelog_binlog::{Gtid, GtidPos};
use onelog_log::classic::read_classic_file;
use onelog_log::inspect::SegmentInspector;
use onelog_log::LogError;
use onelog_log::RecordKind;

use export::Export;
use print::{checked_len, EventPos, Printer};

/// Options of `onelog binlog`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BinlogOptions {
    /// Number of `-v`: 1 prints rows as pseudo-SQL, 2 adds column types.
    pub verbose: u8,
    /// `--base64-output=auto`: print `BINLOG '...'` statements too (default: decode-rows).
    pub base64: bool,
    /// `--start-gtid`: print groups after this position (per domain).
    pub start: GtidPos,
    /// `--stop-gtid`: print groups up to and including these GTIDs (per domain).
    pub stop: GtidPos,
    /// `--to-binlog DIR`.
    pub to_binlog: Option<PathBuf>,
    pub files: Vec<PathBuf>,
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BinlogCommand {
    Run(BinlogOptions),
    Help,
}

/// Help text of `onelog binlog --help`.
pub fn usage() -> &'static str {
    "Usage: onelog binlog [options] FILE...

Prints binlog events as mariadb-binlog --base64-output=decode-rows does. FILE is an onelog
log segment (binlog-NNNNNN.olog, in <datadir>/binlog) or a classic MariaDB binlog file
(binlog.NNNNNN); segments can be read while the server runs.

Options:
  -v, --verbose          print row events as pseudo-SQL (### INSERT INTO ...); twice (-vv)
                         adds column types
  --start-gtid=LIST      only groups after this GTID position (comma-separated, one GTID per
                         domain; domains it does not name are not restricted)
  --stop-gtid=LIST       only groups up to and including these GTIDs, and only of the domains
                         the list names (as mariadb-binlog --stop-position=LIST)
  --to-binlog=DIR        instead of printing, write the selected event groups of the given
                         segments as MariaDB binlog files DIR/binlog.000001... + binlog.index
                         (DIR must not already hold a binlog)
  --base64-output=auto   also print the BINLOG '...' statements (Format_description, row
                         events) that make the output replayable into a MariaDB server, as
                         mariadb-binlog does by default (default here: decode-rows)
  -h, --help             print this help

Exit status: 0 on success, 1 on a usage error or a damaged or truncated file (reported as
`onelog binlog: FILE: offset N: what` after everything before it was printed).
"
}

/// Parses the arguments after `binlog`.
pub fn parse_args(args: &[String]) -> Result<BinlogCommand, String> {
    let mut o = BinlogOptions::default();
    let mut it = args.iter();
    let mut only_files = false;
    while let Some(arg) = it.next() {
        if only_files || !arg.starts_with('-') || arg == "-" {
            o.files.push(PathBuf::from(arg));
            continue;
        }
        if arg == "--" {
            only_files = true;
            continue;
        }
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (arg.as_str(), None),
        };
        let mut value = |what: &str| -> Result<String, String> {
            match inline.clone() {
                Some(v) => Ok(v),
                None => it
                    .next()
                    .cloned()
                    .ok_or_else(|| format!("option '{what}' needs a value: {what}=VALUE")),
            }
        };
        match name {
            "-h" | "--help" | "-?" => return Ok(BinlogCommand::Help),
            "-v" | "--verbose" => o.verbose = o.verbose.saturating_add(1),
            "-vv" => o.verbose = o.verbose.saturating_add(2),
            "--start-gtid" => {
                let v = value(name)?;
                o.start = v
                    .parse()
                    .map_err(|e| format!("invalid --start-gtid '{v}': {e}"))?;
            }
            "--stop-gtid" => {
                let v = value(name)?;
                o.stop = v
                    .parse()
                    .map_err(|e| format!("invalid --stop-gtid '{v}': {e}"))?;
            }
            "--base64-output" => {
                let v = value(name)?;
                o.base64 = match v.to_ascii_lowercase().as_str() {
                    "auto" | "always" => true,
                    "decode-rows" | "never" => false,
                    _ => {
                        return Err(format!(
                            "invalid --base64-output '{v}': auto, never or decode-rows"
                        ))
                    }
                };
            }
            "--to-binlog" => {
                let v = value(name)?;
                if v.is_empty() {
                    return Err("--to-binlog needs a directory".to_string());
                }
                o.to_binlog = Some(PathBuf::from(v));
            }
            _ => {
                return Err(format!(
                    "unknown option '{arg}' (see `onelog binlog --help`)"
                ))
            }
        }
    }
    if o.files.is_empty() {
        return Err("no FILE given (see `onelog binlog --help`)".to_string());
    }
    Ok(BinlogCommand::Run(o))
}

/// Which groups are selected by `--start-gtid` / `--stop-gtid`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GtidFilter {
    pub start: GtidPos,
    pub stop: GtidPos,
}

impl GtidFilter {
    /// True when the group of `g` is printed/exported, as mariadb-binlog decides with GTID
    /// `--start-position`/`--stop-position`: after the start GTID of its domain (domains the
    /// start list does not name are not restricted by it), and, when a stop list is given,
    /// only domains it names, up to and including their stop GTID.
    pub fn selects(&self, g: Gtid) -> bool {
        if self
            .start
            .get(g.domain_id)
            .is_some_and(|s| g.seq_no <= s.seq_no)
        {
            return false;
        }
        if self.stop.is_empty() {
            return true;
        }
        self.stop
            .get(g.domain_id)
            .is_some_and(|s| g.seq_no <= s.seq_no)
    }
}

/// A problem that ends the run (exit status 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fatal {
    pub file: String,
    pub offset: u64,
    pub reason: String,
}

impl std::fmt::Display for Fatal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: offset {}: {}", self.file, self.offset, self.reason)
    }
}

fn fatal(file: &Path, offset: u64, reason: impl Into<String>) -> Fatal {
    Fatal {
        file: file.display().to_string(),
        offset,
        reason: reason.into(),
    }
}

/// Reason of a [`Fatal`] for an output closed by its reader (`onelog binlog ... | head`):
/// the run stops with status 1 without a message, as a tool killed by SIGPIPE would.
const BROKEN_PIPE: &str = "output closed";

fn io_fatal(file: &Path, e: io::Error) -> Fatal {
    if e.kind() == io::ErrorKind::BrokenPipe {
        return fatal(file, 0, BROKEN_PIPE);
    }
    fatal(file, 0, format!("cannot write the output: {e}"))
}

/// What kind of file a path holds, by its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FileKind {
    Segment,
    Classic,
}

fn file_kind(path: &Path) -> Result<FileKind, Fatal> {
    let mut f =
        std::fs::File::open(path).map_err(|e| fatal(path, 0, format!("cannot open: {e}")))?;
    let mut magic = [0u8; 8];
    let mut n = 0;
    while n < magic.len() {
        match f.read(&mut magic[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) => return Err(fatal(path, 0, format!("cannot read: {e}"))),
        }
    }
    if onelog_log::inspect::is_segment(&magic[..n]) {
        Ok(FileKind::Segment)
    } else if magic[..n].starts_with(&BINLOG_MAGIC) {
        Ok(FileKind::Classic)
    } else {
        Err(fatal(
            path,
            0,
            "not a binlog file (neither an onelog segment nor a MariaDB binlog)",
        ))
    }
}

/// `onelog binlog ARGS`: returns the exit status.
pub fn main(args: &[String]) -> i32 {
    let opts = match parse_args(args) {
        Ok(BinlogCommand::Help) => {
            print!("{}", usage());
            return 0;
        }
        Ok(BinlogCommand::Run(o)) => o,
        Err(e) => {
            eprintln!("onelog binlog: {e}");
            return 1;
        }
    };
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let stderr = io::stderr();
    let mut err = stderr.lock();
    let code = run(&opts, &mut out, &mut err);
    match out.flush() {
        Ok(()) => code,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => 1,
        Err(e) => {
            let _ = writeln!(err, "onelog binlog: cannot write the output: {e}");
            1
        }
    }
}

/// Runs the command; text goes to `out`, the error (if any) to `err`. Returns the exit status.
pub fn run(opts: &BinlogOptions, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let result = match &opts.to_binlog {
        Some(dir) => run_export(opts, dir, out),
        None => run_print(opts, out),
    };
    match result {
        Ok(()) => 0,
        Err(f) => {
            let _ = out.flush();
            if f.reason != BROKEN_PIPE {
                let _ = writeln!(err, "onelog binlog: {f}");
            }
            1
        }
    }
}

fn run_print(opts: &BinlogOptions, out: &mut dyn Write) -> Result<(), Fatal> {
    let filter = GtidFilter {
        start: opts.start.clone(),
        stop: opts.stop.clone(),
    };
    let first = opts.files.first().cloned().unwrap_or_default();
    Printer::preamble(out).map_err(|e| io_fatal(&first, e))?;
    for (i, path) in opts.files.iter().enumerate() {
        // As mariadb-binlog: every file starts with fresh session state, and the delimiter
        // is reset and declared again between files.
        let mut printer = Printer::new(opts.verbose);
        printer.base64 = opts.base64;
        let printer = &mut printer;
        if i > 0 {
            out.write_all(b"DELIMITER ;\nDELIMITER /*!*/;\n")
                .map_err(|e| io_fatal(path, e))?;
        }
        match file_kind(path)? {
            FileKind::Segment => print_segment(path, &filter, printer, out)?,
            FileKind::Classic => print_classic(path, &filter, printer, out)?,
        }
    }
    Printer::postamble(out).map_err(|e| io_fatal(&first, e))
}

fn print_segment(
    path: &Path,
    filter: &GtidFilter,
    printer: &mut Printer,
    out: &mut dyn Write,
) -> Result<(), Fatal> {
    let mut ins = SegmentInspector::open(path).map_err(|e| fatal(path, e.offset, e.reason))?;
    let h = ins.header().clone();
    let w = |r: io::Result<()>| r.map_err(|e| io_fatal(path, e));
    w(writeln!(
        out,
        "# onelog segment {} ({}): start LSN {}, records from offset {}",
        h.number,
        path.display(),
        h.start_lsn,
        h.header_len
    ))?;
    w(writeln!(
        out,
        "# GTID state at the start of the segment [{}]",
        h.state
    ))?;
    let fde_offset = ins.fde_offset();
    let pos = EventPos {
        offset: fde_offset,
        end_log_pos: fde_offset + h.fde.len() as u64,
    };
    match printer.event(out, pos, &h.fde) {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(fatal(path, e.offset, e.reason)),
        Err(e) => return Err(io_fatal(path, e)),
    }
    loop {
        let rec = match ins.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => return Err(fatal(path, e.offset, e.reason)),
        };
        match rec.kind {
            RecordKind::Transaction | RecordKind::Ddl => {
                let Some(gtid) = rec.gtid else { continue };
                if !filter.selects(gtid) {
                    continue;
                }
                let aux = if rec.aux.is_empty() {
                    String::new()
                } else {
                    format!(", {} aux bytes", rec.aux.len())
                };
                w(writeln!(
                    out,
                    "# LSN {}: {} record at offset {} ({} bytes{aux})",
                    rec.lsn,
                    rec.kind.name(),
                    rec.offset,
                    rec.frame_len
                ))?;
                printer.start_group();
                print_events(path, rec.events_offset(), &rec.events, printer, out)?;
            }
            RecordKind::GtidState => {
                let state = rec.state.map(|s| s.to_string()).unwrap_or_default();
                w(writeln!(
                    out,
                    "# LSN {}: GtidState record at offset {}: GTID state [{state}]",
                    rec.lsn, rec.offset
                ))?;
            }
            RecordKind::CommitMark => {
                let what = match rec.commit_mark {
                    Some(l) => format!("groups up to LSN {l} are committed"),
                    None => format!("{} payload bytes", rec.aux.len()),
                };
                w(writeln!(
                    out,
                    "# LSN {}: CommitMark record at offset {}: {what}",
                    rec.lsn, rec.offset
                ))?;
            }
            RecordKind::SyncMark => {
                let what = match onelog_log::frame::sync_mark_lsns(&rec.aux) {
                    Some((_, s)) => format!("the log was synced up to LSN {s}"),
                    None => format!("{} payload bytes", rec.aux.len()),
                };
                w(writeln!(
                    out,
                    "# LSN {}: SyncMark record at offset {}: {what}",
                    rec.lsn, rec.offset
                ))?;
            }
        }
    }
    Ok(())
}

/// Prints the events of one group stored at file offset `base`.
fn print_events(
    path: &Path,
    base: u64,
    events: &[u8],
    printer: &mut Printer,
    out: &mut dyn Write,
) -> Result<(), Fatal> {
    let mut at = 0usize;
    while at < events.len() {
        let off = base + at as u64;
        let len = checked_len(&events[at..]).map_err(|e| fatal(path, off, e))?;
        let pos = EventPos {
            offset: off,
            end_log_pos: off + len as u64,
        };
        match printer.event(out, pos, &events[at..at + len]) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(fatal(path, e.offset, e.reason)),
            Err(e) => return Err(io_fatal(path, e)),
        }
        at += len;
    }
    Ok(())
}

/// A `LogError` of `read_classic_file` as a `Fatal`.
fn classic_fatal(path: &Path, e: LogError) -> Fatal {
    match e {
        LogError::Corrupt { offset, reason, .. } => fatal(path, offset, reason),
        LogError::Io { offset, source, .. } => fatal(path, offset, source.to_string()),
        other => fatal(path, 0, other.to_string()),
    }
}

fn print_classic(
    path: &Path,
    filter: &GtidFilter,
    printer: &mut Printer,
    out: &mut dyn Write,
) -> Result<(), Fatal> {
    let data = std::fs::read(path).map_err(|e| fatal(path, 0, format!("cannot read: {e}")))?;
    let name = path.display().to_string();
    let mut skipping = false;
    for item in read_classic_file(&name, &data) {
        let ev = item.map_err(|e| classic_fatal(path, e))?;
        match ev.event_type() {
            event_type::GTID => {
                let g = GtidEvent::decode(ev.bytes)
                    .map_err(|e| fatal(path, ev.offset, e.to_string()))?;
                skipping = !filter.selects(g.gtid);
            }
            event_type::FORMAT_DESCRIPTION
            | event_type::ROTATE
            | event_type::GTID_LIST
            | event_type::BINLOG_CHECKPOINT
            | event_type::STOP
            | event_type::START_ENCRYPTION => skipping = false,
            _ => {}
        }
        if skipping {
            continue;
        }
        let pos = EventPos {
            offset: ev.offset,
            end_log_pos: u64::from(ev.end_log_pos()),
        };
        match printer.event(out, pos, ev.bytes) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(fatal(path, e.offset, e.reason)),
            Err(e) => return Err(io_fatal(path, e)),
        }
    }
    Ok(())
}

fn run_export(opts: &BinlogOptions, dir: &Path, out: &mut dyn Write) -> Result<(), Fatal> {
    let filter = GtidFilter {
        start: opts.start.clone(),
        stop: opts.stop.clone(),
    };
    for path in &opts.files {
        if file_kind(path)? == FileKind::Classic {
            return Err(fatal(
                path,
                0,
                "--to-binlog exports onelog segments; this is already a MariaDB binlog file",
            ));
        }
    }
    let mut export = Export::new(dir).map_err(|e| fatal(dir, 0, e))?;
    let mut result = Ok(());
    for path in &opts.files {
        result = export_segment(path, &filter, &mut export);
        if result.is_err() {
            break;
        }
    }
    // What was exported before a problem is closed cleanly either way.
    let summary = export.finish().map_err(|e| fatal(dir, 0, e));
    result?;
    let summary = summary?;
    let w = |r: io::Result<()>| r.map_err(|e| io_fatal(dir, e));
    w(writeln!(
        out,
        "exported {} event groups to {}{}",
        summary.groups,
        dir.display(),
        match (summary.first, summary.last) {
            (Some(a), Some(b)) => format!(" (GTIDs {a} .. {b})"),
            _ => String::new(),
        }
    ))?;
    w(writeln!(
        out,
        "initial GTID state [{}]",
        summary.initial_state
    ))?;
    for f in &summary.files {
        w(writeln!(out, "{f}"))?;
    }
    Ok(())
}

fn export_segment(path: &Path, filter: &GtidFilter, export: &mut Export) -> Result<(), Fatal> {
    let mut ins = SegmentInspector::open(path).map_err(|e| fatal(path, e.offset, e.reason))?;
    export
        .segment_header(ins.header())
        .map_err(|e| fatal(path, 0, e))?;
    loop {
        let rec = match ins.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => return Ok(()),
            Err(e) => return Err(fatal(path, e.offset, e.reason)),
        };
        match (rec.kind, rec.gtid, rec.state) {
            (RecordKind::Transaction | RecordKind::Ddl, Some(g), _) => {
                if filter.selects(g) {
                    export
                        .append(g, &rec.events)
                        .map_err(|e| fatal(path, rec.offset, e))?;
                } else {
                    export.pass(g);
                }
            }
            (RecordKind::GtidState, _, Some(s)) => export.state_record(&s),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn parses_options_and_files() {
        let c = parse_args(&args(&[
            "-v",
            "--start-gtid=0-1-3,1-1-2",
            "--stop-gtid",
            "0-1-9",
            "--to-binlog",
            "/tmp/x",
            "a.olog",
            "--verbose",
            "b",
        ]))
        .unwrap();
        let BinlogCommand::Run(o) = c else {
            panic!("{c:?}")
        };
        assert_eq!(o.verbose, 2);
        assert_eq!(o.start.to_string(), "0-1-3,1-1-2");
        assert_eq!(o.stop.to_string(), "0-1-9");
        assert_eq!(o.to_binlog, Some(PathBuf::from("/tmp/x")));
        assert_eq!(o.files, [PathBuf::from("a.olog"), PathBuf::from("b")]);
        assert_eq!(parse_args(&args(&["--help"])).unwrap(), BinlogCommand::Help);
    }

    #[test]
    fn rejects_bad_arguments() {
        assert!(parse_args(&args(&[])).is_err());
        assert!(parse_args(&args(&["-v"])).is_err());
        assert!(parse_args(&args(&["--start-gtid=zz", "f"])).is_err());
        assert!(parse_args(&args(&["--start-gtid=0-1-1,0-1-2", "f"])).is_err());
        assert!(parse_args(&args(&["--bogus", "f"])).is_err());
        assert!(parse_args(&args(&["f", "--stop-gtid"])).is_err());
    }

    #[test]
    fn filter_is_exclusive_at_start_and_inclusive_at_stop() {
        let f = GtidFilter {
            start: "0-1-3".parse().unwrap(),
            stop: "0-1-5".parse().unwrap(),
        };
        let sel: Vec<u64> = (1..8).filter(|&s| f.selects(Gtid::new(0, 1, s))).collect();
        assert_eq!(sel, [4, 5]);
        // A stop list keeps only the domains it names (as mariadb-binlog does).
        assert!(!f.selects(Gtid::new(1, 1, 100)));
        // A start list does not restrict other domains.
        let f = GtidFilter {
            start: "0-1-3".parse().unwrap(),
            stop: GtidPos::new(),
        };
        assert!(f.selects(Gtid::new(1, 1, 1)));
        assert!(!f.selects(Gtid::new(0, 1, 3)));
    }
}
