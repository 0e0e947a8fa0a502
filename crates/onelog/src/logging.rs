//! The server's error log: MariaDB-style lines on stderr.
//!
//! Owns [`note`], [`warning`], [`error`]: each writes one line
//! `YYYY-MM-DD HH:MM:SS 0 [Note] message` (the timestamp in UTC; MariaDB writes local time and
//! the thread id where we write 0), like mariadbd's error log, so log scrapers and people used to
//! it read it the same way. The ready banner is written raw by `serve.rs` in mariadbd's exact
//! shape because tools wait for it.
//!
//! Invariants: each call writes one whole line under stderr's lock, so lines from different
//! threads never interleave.

use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use onelog_binlog::value::civil_from_days;

/// `YYYY-MM-DD HH:MM:SS` in UTC for `secs` since the epoch.
pub fn format_timestamp(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

fn line(level: &str, msg: &str) {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut err = std::io::stderr().lock();
    // A log line that cannot be written (stderr closed) is not worth dying for.
    let _ = writeln!(err, "{} 0 [{level}] {msg}", format_timestamp(now));
}

pub fn note(msg: &str) {
    line("Note", msg);
}

pub fn warning(msg: &str) {
    line("Warning", msg);
}

pub fn error(msg: &str) {
    line("ERROR", msg);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_utc_calendar_dates() {
        assert_eq!(format_timestamp(0), "1970-01-01 00:00:00");
        assert_eq!(format_timestamp(951_782_400), "2000-02-29 00:00:00");
        assert_eq!(format_timestamp(1_700_000_000), "2023-11-14 22:13:20");
    }
}
