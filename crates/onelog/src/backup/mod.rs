//! Backup, restore and offline checks: `onelog backup`, `onelog restore`, `onelog check`
//! (docs/BACKUP.md; DESIGN.md §7a: the log is the history, so a backup is the newest
//! checkpoint plus the log from its LSN to a durable LSN, and a restore is a recovery).
//!
//! Owns the three subcommands' argument parsing ([`parse_backup`], [`parse_restore`]) and
//! entry points ([`backup_main`], [`restore_main`], `check::main`); the work is in
//! `copy.rs` (the online copy), `restore.rs`, `check.rs`, with the manifest format in
//! `manifest.rs`, the server session in `source.rs` and the output targets in `target.rs`.
//!
//! Invariants: everything the commands create is private to the OS user (umask 077, as
//! `onelog serve`); options use mariadb-backup's names where it has the option (`--target-dir`,
//! `--incremental-basedir`, `--stream`, `--host`, `--port`, `--user`, `--password`,
//! `--datadir`); every option given is applied or refused with an error naming it; exit
//! status 0 only on success.

pub mod check;
pub mod copy;
pub mod manifest;
pub mod restore;
pub mod source;
pub mod target;

use std::path::{Path, PathBuf};

use onelog_binlog::Gtid;
use onelog_log::segment::parse_name;

use copy::BackupOptions;
use manifest::{Manifest, MANIFEST};
use restore::{RestoreOptions, Stop};

/// `1.5 GiB`-style sizes for messages.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} bytes")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// The segment files of `logdir` (`binlog-NNNNNN.olog`) by number; none if it does not exist.
pub fn list_segments(logdir: &Path) -> Result<Vec<(u64, PathBuf)>, String> {
    let mut v = Vec::new();
    let rd = match std::fs::read_dir(logdir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(v),
        Err(e) => return Err(format!("cannot list {}: {e}", logdir.display())),
    };
    for entry in rd {
        let entry = entry.map_err(|e| format!("cannot list {}: {e}", logdir.display()))?;
        if let Some(n) = entry.file_name().to_str().and_then(parse_name) {
            v.push((n, entry.path()));
        }
    }
    v.sort();
    Ok(v)
}

/// Reads and parses `dir/backup.info`.
pub fn read_manifest(dir: &Path) -> Result<Manifest, String> {
    let path = dir.join(MANIFEST);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!(
                "{}: not a complete backup: no {MANIFEST} (was the backup interrupted?)",
                dir.display()
            ))
        }
        Err(e) => return Err(format!("{}: cannot read: {e}", path.display())),
    };
    Manifest::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Options given as `(name, value)`, names with `-` for `_`; flags have no value.
type Named = Vec<(String, Option<String>)>;

/// Splits `--name=value` / `--name value` arguments; `flags` take no value.
fn options<'a>(args: &'a [String], flags: &[&str]) -> Result<(Named, Vec<&'a String>), String> {
    let mut opts = Vec::new();
    let mut positional = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let Some(body) = a.strip_prefix("--") else {
            positional.push(a);
            continue;
        };
        let (name, value) = match body.split_once('=') {
            Some((n, v)) => (n.replace('_', "-"), Some(v.to_owned())),
            None => (body.replace('_', "-"), None),
        };
        let value = if value.is_none() && !flags.contains(&name.as_str()) {
            Some(
                it.next()
                    .ok_or_else(|| format!("option --{name} needs a value"))?
                    .clone(),
            )
        } else {
            value
        };
        opts.push((name, value));
    }
    Ok((opts, positional))
}

const BACKUP_USAGE: &str = "usage: onelog backup (--target-dir=DIR | --stream) [--incremental-basedir=DIR]
                     [--host=127.0.0.1] [--port=3306] [--user=root] [--password=PW] [--datadir=DIR]";

/// Parses `onelog backup`'s arguments.
pub fn parse_backup(args: &[String]) -> Result<BackupOptions, String> {
    let (opts, positional) = options(args, &["stream", "help"])?;
    if let Some(p) = positional.first() {
        return Err(format!("unexpected argument {p:?}"));
    }
    let mut o = BackupOptions::default();
    for (name, value) in opts {
        let v = value.clone().unwrap_or_default();
        match name.as_str() {
            "target-dir" => o.target_dir = Some(PathBuf::from(v)),
            "stream" => {
                if value.as_deref().is_some_and(|v| v != "tar") {
                    return Err("--stream writes a tar archive (--stream or --stream=tar)".into());
                }
                o.stream = true
            }
            "incremental-basedir" => o.incremental_basedir = Some(PathBuf::from(v)),
            "host" => o.connect.host = v,
            "port" => o.connect.port = v.parse().map_err(|_| format!("--port: bad port {v:?}"))?,
            "user" => o.connect.user = v,
            "password" => o.connect.password = v,
            "datadir" => o.datadir = Some(PathBuf::from(v)),
            "help" => return Err(BACKUP_USAGE.into()),
            _ => return Err(format!("unknown option --{name}\n{BACKUP_USAGE}")),
        }
    }
    if o.stream == o.target_dir.is_some() {
        return Err(format!(
            "give exactly one of --target-dir and --stream\n{BACKUP_USAGE}"
        ));
    }
    Ok(o)
}

const RESTORE_USAGE: &str = "usage: onelog restore --target-dir=NEW_DATADIR [--stop-gtid=D-S-N | --stop-datetime='YYYY-MM-DD HH:MM:SS']
                      [--table-store=memory|paged [--innodb-buffer-pool-size=N]]
                      FULL_BACKUP_DIR [INCREMENTAL_BACKUP_DIR ...]
  --table-store=paged   the restored directory is for a server on the paged table store: when
                        restore has to recover it, it opens it with that store (cache budget
                        --innodb-buffer-pool-size, default 128M) instead of in memory";

/// `YYYY-MM-DD HH:MM:SS` as seconds since the epoch, read in the server's time zone: onelog's
/// `SYSTEM` zone is UTC (`@@system_time_zone`), so the time means what `NOW()` and the binlog's
/// timestamps show (mariadb-binlog reads it in its machine's zone, the server's own for MariaDB).
fn parse_server_datetime(s: &str) -> Option<i64> {
    let (date, time) = s.trim().split_once([' ', 'T'])?;
    let d: Vec<i64> = date
        .split('-')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let t: Vec<i64> = time
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let ([y, mo, da], [h, mi, se]) = (d.as_slice(), t.as_slice()) else {
        return None;
    };
    if !(1..=12).contains(mo) || !(1..=31).contains(da) || !(0..=23).contains(h) {
        return None;
    }
    if !(0..=59).contains(mi) || !(0..=59).contains(se) {
        return None;
    }
    let days = onelog_binlog::value::days_from_civil(*y, *mo as u32, *da as u32);
    Some(days * 86_400 + h * 3600 + mi * 60 + se)
}

/// Parses `onelog restore`'s arguments.
pub fn parse_restore(args: &[String]) -> Result<RestoreOptions, String> {
    let (opts, positional) = options(args, &["help"])?;
    let mut o = RestoreOptions::default();
    let mut target = None;
    let (mut paged, mut budget) = (false, None);
    for (name, value) in opts {
        let v = value.unwrap_or_default();
        let stop =
            match name.as_str() {
                "target-dir" => {
                    target = Some(PathBuf::from(v));
                    continue;
                }
                "table-store" => {
                    paged = crate::cli::parse_table_store(&v)
                        .map_err(|e| format!("--table-store: {e}, not {v:?}"))?;
                    continue;
                }
                "innodb-buffer-pool-size" => {
                    let n = crate::cli::parse_buffer_pool_size(&v)
                        .map_err(|e| format!("--innodb-buffer-pool-size: {e}"))?;
                    budget = Some(n);
                    continue;
                }
                "stop-gtid" => Stop::Gtid(v.parse::<Gtid>().map_err(|_| {
                    format!("--stop-gtid: {v:?} is not a GTID (domain-server-seq)")
                })?),
                "stop-datetime" => Stop::Time(parse_server_datetime(&v).ok_or_else(|| {
                    format!("--stop-datetime: {v:?} is not 'YYYY-MM-DD HH:MM:SS'")
                })?),
                "help" => return Err(RESTORE_USAGE.into()),
                _ => return Err(format!("unknown option --{name}\n{RESTORE_USAGE}")),
            };
        if o.stop.replace(stop).is_some() {
            return Err("give at most one of --stop-gtid and --stop-datetime".into());
        }
    }
    o.paged_memory = match (paged, budget) {
        (true, b) => Some(b.unwrap_or(crate::serve::PAGED_MEMORY_BYTES)),
        (false, None) => None,
        (false, Some(_)) => {
            return Err(
                "--innodb-buffer-pool-size is the paged table store's budget: give \
                        --table-store=paged with it"
                    .into(),
            )
        }
    };
    o.target_dir = target.ok_or_else(|| format!("--target-dir is required\n{RESTORE_USAGE}"))?;
    o.backups = positional.into_iter().map(PathBuf::from).collect();
    if o.backups.is_empty() {
        return Err(format!("name the backup to restore\n{RESTORE_USAGE}"));
    }
    Ok(o)
}

/// `onelog backup ARGS`: exit status.
pub fn backup_main(args: &[String]) -> i32 {
    if asks_for_help(args) {
        println!("{BACKUP_USAGE}");
        return 0;
    }
    // A backup holds every row: its files are the OS user's alone, like the data directory's.
    crate::datadir::set_private_umask();
    let result = parse_backup(args).and_then(|o| copy::run(&o));
    match result {
        Ok(_) => 0,
        Err(e) => {
            eprintln!("onelog backup: {e}");
            1
        }
    }
}

/// Whether a command's arguments ask for its usage (`--help` or `-?`, as MariaDB's tools; `-h`
/// is not one of them: `mariadb-backup -h` names a host there).
pub fn asks_for_help(args: &[String]) -> bool {
    args.iter().any(|a| a == "--help" || a == "-?")
}

/// `onelog restore ARGS`: exit status.
pub fn restore_main(args: &[String]) -> i32 {
    if asks_for_help(args) {
        println!("{RESTORE_USAGE}");
        return 0;
    }
    crate::datadir::set_private_umask();
    let result = parse_restore(args).and_then(|o| restore::run(&o).map(|r| (o, r)));
    match result {
        Ok((o, r)) => {
            println!(
                "onelog restore: {} is ready (log ends at LSN {}); gtid_binlog_pos = gtid_slave_pos = {}",
                o.target_dir.display(),
                r.end_lsn,
                r.gtid_pos
            );
            0
        }
        Err(e) => {
            eprintln!("onelog restore: {e}");
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn backup_options_use_mariadb_backup_names() {
        let o = parse_backup(&args(&[
            "--target-dir=/b",
            "--host",
            "127.0.0.1",
            "--port=3307",
            "--user=bk",
            "--password=pw",
            "--incremental_basedir=/a",
        ]))
        .unwrap();
        assert_eq!(o.target_dir, Some(PathBuf::from("/b")));
        assert_eq!((o.connect.port, o.connect.user.as_str()), (3307, "bk"));
        assert_eq!(o.incremental_basedir, Some(PathBuf::from("/a")));
        assert!(parse_backup(&args(&["--stream"])).unwrap().stream);
        assert!(parse_backup(&args(&["--stream", "--target-dir=/b"])).is_err());
        assert!(parse_backup(&args(&[])).is_err());
        assert!(parse_backup(&args(&["--stream=xbstream"])).is_err());
        assert!(parse_backup(&args(&["--stream", "--throttle=5"]))
            .unwrap_err()
            .contains("unknown option --throttle"));
    }

    #[test]
    fn restore_options() {
        let o =
            parse_restore(&args(&["--target-dir=/n", "--stop-gtid=0-1-5", "/f", "/i"])).unwrap();
        assert_eq!(o.stop, Some(Stop::Gtid(Gtid::new(0, 1, 5))));
        assert_eq!(o.backups, vec![PathBuf::from("/f"), PathBuf::from("/i")]);
        assert_eq!(o.paged_memory, None);
        let paged = |a: &[&str]| parse_restore(&args(&[&["--target-dir=/n"], a, &["/f"]].concat()));
        assert_eq!(
            paged(&["--table-store=paged"]).unwrap().paged_memory,
            Some(128 << 20)
        );
        let o = paged(&["--table-store=PAGED", "--innodb-buffer-pool-size=32M"]).unwrap();
        assert_eq!(o.paged_memory, Some(32 << 20));
        assert_eq!(paged(&["--table-store=memory"]).unwrap().paged_memory, None);
        assert!(paged(&["--innodb-buffer-pool-size=32M"])
            .unwrap_err()
            .contains("give --table-store=paged"));
        assert!(paged(&["--table-store=disk"]).is_err());
        assert!(paged(&["--table-store=paged", "--innodb-buffer-pool-size=1K"]).is_err());
        assert!(parse_restore(&args(&["--target-dir=/n"])).is_err());
        assert!(parse_restore(&args(&["/f"])).is_err());
        assert!(parse_restore(&args(&["--target-dir=/n", "--stop-gtid=x", "/f"])).is_err());
        let o = parse_restore(&args(&[
            "--target-dir=/n",
            "--stop-datetime=2026-01-02 03:04:05",
            "/f",
        ]))
        .unwrap();
        assert_eq!(
            o.stop,
            Some(Stop::Time(1_767_323_045)),
            "UTC, as the server's NOW()"
        );
        assert!(parse_restore(&args(&[
            "--target-dir=/n",
            "--stop-datetime=2026-13-02 03:04:05",
            "/f"
        ]))
        .is_err());
    }

    #[test]
    fn sizes_read_like_humans_write_them() {
        assert_eq!(human_bytes(512), "512 bytes");
        assert_eq!(human_bytes(3 << 29), "1.5 GiB");
    }
}
