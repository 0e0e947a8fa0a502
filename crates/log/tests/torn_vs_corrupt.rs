//! Torn is not corrupt (issue 9, part 4): damage in bytes that were synced is refused with
//! file and offset (and the option that accepts the loss); what a crash can leave is cut;
//! no acknowledged commit is ever dropped.

mod common;

use std::sync::Arc;

use common::*;
use onelog_log::frame::{self, FRAME_HEADER_LEN};
use onelog_log::{Durability, Log, LogError, LogOptions, LogRecovery, RecordKind, SimFs};

const SEG: u64 = 1 << 20;

fn seg_path(n: u64) -> std::path::PathBuf {
    dir().join(format!("binlog-{n:06}.olog"))
}

/// A log with `n` acknowledged level-1 commits of `body` bytes each, shut down uncleanly (a
/// power cut after the last ack, nothing torn): returns the rebooted disk and the tags.
fn committed_log(n: u64, body: usize) -> Arc<SimFs> {
    let fs = SimFs::new();
    let log = open(&fs, opts(SEG, Durability::Level1));
    for i in 0..n {
        log.commit(txn(i, body)).unwrap();
    }
    assert_eq!(log.segments().len(), 1, "the test wants one segment");
    let fs2 = fs.reboot(1, false);
    drop(log);
    fs2
}

/// (file offset, kind) of each record.
type Records = Vec<(u64, RecordKind)>;

/// The records of segment 1 (file offset, kind), the SyncMarks in it (LSN, synced), and
/// the end of its records.
fn layout(fs: &SimFs) -> (Records, Vec<(u64, u64)>, u64) {
    let bytes = fs.read_file(&seg_path(1)).unwrap();
    let header_len = 4096u64;
    let mut offs = Vec::new();
    let mut off = header_len as usize;
    while let Ok(f) = frame::decode(&bytes[off..]) {
        offs.push((off as u64, f.kind));
        off += f.len;
    }
    let marks = frame::find_sync_marks(&bytes[header_len as usize..off], 0);
    (offs, marks, off as u64)
}

fn open_err(fs: &Arc<SimFs>, o: LogOptions) -> LogError {
    match Log::open(fs.clone(), o) {
        Ok((_, rep)) => panic!("opened a damaged log: {rep:?}"),
        Err(e) => e,
    }
}

/// The offset of the record holding byte `p`.
fn record_at(offs: &[(u64, RecordKind)], p: u64) -> u64 {
    offs.iter().rev().find(|&&(o, _)| o <= p).unwrap().0
}

/// Transactions before file offset `at`.
fn txns_before(offs: &[(u64, RecordKind)], at: u64) -> usize {
    offs.iter()
        .filter(|&&(o, k)| o < at && k == RecordKind::Transaction)
        .count()
}

/// Damages `[p, p + bytes.len())` in a copy of the log, checks the refusal names the file,
/// the record's offset and the option, then that the option opens it with every record
/// before the damaged one.
fn assert_refused_then_cut(
    base: &Arc<SimFs>,
    p: u64,
    bytes: &[u8],
    offs: &[(u64, RecordKind)],
    ctx: &str,
) {
    let fs = base.reboot(0, false);
    let old = base.read_file(&seg_path(1)).unwrap();
    // The first byte the damage changes (zeroing a zero byte changes nothing).
    let q = (0..bytes.len())
        .find(|&i| old[p as usize + i] != bytes[i])
        .map(|i| p + i as u64)
        .unwrap();
    assert!(fs.corrupt(&seg_path(1), p, bytes), "{ctx}");
    let e = open_err(&fs, opts(SEG, Durability::Level1));
    let want = record_at(offs, q);
    match &e {
        LogError::Corrupt { path, offset, .. } => {
            assert_eq!(path, &seg_path(1), "{ctx}: {e}");
            assert_eq!(*offset, want, "{ctx}: {e}");
        }
        _ => panic!("{ctx}: expected Corrupt, got {e}"),
    }
    let msg = e.to_string();
    assert!(msg.contains("binlog-000001.olog at offset"), "{ctx}: {msg}");
    assert!(
        msg.contains("--log-recovery=truncate-damaged"),
        "{ctx}: {msg}"
    );
    // Refusing changed nothing: a second open refuses the same way.
    assert_eq!(
        open_err(&fs, opts(SEG, Durability::Level1)).to_string(),
        msg,
        "{ctx}"
    );
    let o = LogOptions {
        recovery: LogRecovery::TruncateDamaged,
        ..opts(SEG, Durability::Level1)
    };
    let (log, rep) = Log::open(fs.clone(), o).unwrap();
    assert_eq!(rep.damage_cuts.len(), 1, "{ctx}");
    assert_eq!(rep.damage_cuts[0].offset, want, "{ctx}");
    // The log continues at the cut (before a SyncMark that only preceded the bad record).
    assert!(
        rep.offset == want || rep.offset + frame::SYNC_MARK_LEN as u64 == want,
        "{ctx}: continues at {}",
        rep.offset
    );
    let recs = all_records(&log);
    assert_eq!(recs.len(), txns_before(offs, want), "{ctx}");
    assert_contiguous(&recs, ctx);
    log.commit(txn(999_999, 10)).unwrap();
    drop(log);
    // Once cut, the log opens normally.
    Log::open(fs.clone(), opts(SEG, Durability::Level1)).unwrap();
}

#[test]
fn flips_and_zeroed_pages_anywhere_in_the_synced_region_are_refused_and_the_option_cuts_them() {
    let base = committed_log(400, 300);
    let (offs, marks, end) = layout(&base);
    assert!(marks.len() > 100, "level 1 frames a SyncMark per group");
    // Synced region: bytes below the synced LSN of a mark that lies after them.
    let synced_before = |last_byte: u64| {
        marks
            .iter()
            .any(|&(at, synced)| 4096 + at > last_byte && 4096 + synced > last_byte)
    };
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    let (mut flips, mut pages) = (0, 0);
    while flips < 40 || pages < 12 {
        let p = 4096 + rnd(end - 4096);
        if flips < 40 && synced_before(p) {
            let bit = 1u8 << rnd(8);
            let old = base.read_file(&seg_path(1)).unwrap()[p as usize];
            assert_refused_then_cut(&base, p, &[old ^ bit], &offs, &format!("flip at {p}"));
            flips += 1;
        }
        let page = p & !4095;
        if pages < 12 && page >= 4096 && synced_before(page + 4095) {
            let ctx = format!("zeroed page at {page}");
            assert_refused_then_cut(&base, page, &[0u8; 4096], &offs, &ctx);
            pages += 1;
        }
    }
}

#[test]
fn a_flip_in_the_first_record_of_twelve_megabytes_of_records_is_refused() {
    // 8 MiB of records after the damage: farther than a crash can leave unsynced bytes.
    let fs = SimFs::new();
    let o = opts(32 << 20, Durability::Level2);
    let log = open(&fs, o.clone());
    for i in 0..2000 {
        log.commit(txn(i, 6000)).unwrap();
    }
    log.flush().unwrap();
    drop(log);
    let fs = fs.reboot(2, false);
    let bytes = fs.read_file(&seg_path(1)).unwrap();
    let victim = 4096 + 100;
    assert!(fs.corrupt(&seg_path(1), victim, &[bytes[victim as usize] ^ 0x40]));
    let e = open_err(&fs, o);
    assert!(matches!(&e, LogError::Corrupt { offset: 4096, .. }), "{e}");
    assert!(
        e.to_string().contains("--log-recovery=truncate-damaged"),
        "{e}"
    );
}

#[test]
fn a_segment_shorter_than_its_preallocated_size_is_refused_and_the_option_restores_it() {
    let base = committed_log(200, 300);
    let (offs, _, end) = layout(&base);
    for cut in [end - 100, end + 10_000, SEG / 2 + 7] {
        let fs = base.reboot(0, false);
        let f = onelog_log::FileSystem::open(&*fs, &seg_path(1), false).unwrap();
        f.set_len(cut).unwrap();
        f.sync_data().unwrap();
        drop(f);
        let e = open_err(&fs, opts(SEG, Durability::Level1));
        let msg = e.to_string();
        assert!(
            matches!(&e, LogError::Corrupt { offset, .. } if *offset == cut),
            "{cut}: {msg}"
        );
        assert!(
            msg.contains(&format!("preallocated to {SEG} bytes")),
            "{msg}"
        );
        assert!(msg.contains("--log-recovery=truncate-damaged"), "{msg}");
        let o = LogOptions {
            recovery: LogRecovery::TruncateDamaged,
            ..opts(SEG, Durability::Level1)
        };
        let (log, rep) = Log::open(fs.clone(), o).unwrap();
        assert_eq!(rep.damage_cuts[0].offset, cut, "{rep:?}");
        let n = all_records(&log).len();
        if cut >= end {
            assert_eq!(n, 200, "nothing was lost");
        } else {
            // The record the cut went through is lost with everything after it.
            let through = record_at(&offs, cut);
            assert_eq!(n, txns_before(&offs, through));
        }
        drop(log);
        Log::open(fs.clone(), opts(SEG, Durability::Level1)).unwrap();
    }
}

#[test]
fn a_shortened_sealed_segment_is_refused_whatever_the_option() {
    let fs = SimFs::new();
    let log = open(&fs, opts(64 << 10, Durability::Level1));
    for i in 0..800 {
        log.commit(txn(i, 200)).unwrap();
    }
    assert!(log.segments().len() > 2);
    log.shutdown().unwrap();
    drop(log);
    let f = onelog_log::FileSystem::open(&*fs, &seg_path(1), false).unwrap();
    f.set_len(60 << 10).unwrap();
    drop(f);
    for recovery in [LogRecovery::Strict, LogRecovery::TruncateDamaged] {
        let o = LogOptions {
            recovery,
            ..opts(64 << 10, Durability::Level1)
        };
        let e = open_err(&fs, o);
        assert!(
            matches!(&e, LogError::Corrupt { path, offset, .. }
                if *path == seg_path(1) && *offset == 60 << 10),
            "{e}"
        );
        assert!(!e.to_string().contains("--log-recovery"), "{e}");
    }
}

/// Power cuts while commits run, at every level, with torn last writes: recovery always
/// opens (what a crash leaves is never taken for damage) and at level 1 keeps every
/// acknowledged commit.
#[test]
fn torn_tails_from_power_cuts_always_recover_with_every_acknowledged_commit() {
    let mut torn_runs = 0;
    for seed in 0..60u64 {
        let level = [Durability::Level1, Durability::Level2, Durability::Level0][seed as usize % 3];
        let fs = SimFs::new();
        let o = opts(SEG, level);
        let log = open(&fs, o.clone());
        let mut acked = Vec::new();
        fs.arm_crash_point("commit.after_write", 3 + seed % 17);
        for i in 0..200u64 {
            let body = 100 + ((seed * 7919 + i * 104_729) % 9000) as usize;
            match log.commit(txn(i, body)) {
                Ok(_) => acked.push(i),
                Err(_) => break,
            }
            if i % 13 == seed % 13 {
                // Some syncs at levels 0/2 too, so marks appear there.
                let _ = log.flush();
            }
        }
        let fs2 = fs.reboot(seed, true);
        drop(log);
        let (log, rep) = Log::open(fs2.clone(), o.clone()).unwrap_or_else(|e| {
            panic!("seed {seed} ({level:?}): a crash was taken for damage: {e}")
        });
        assert!(rep.damage_cuts.is_empty());
        torn_runs += usize::from(rep.torn_bytes > 0);
        let tags: Vec<u64> = all_records(&log).iter().map(tag_of).collect();
        assert_eq!(
            tags,
            (0..tags.len() as u64).collect::<Vec<_>>(),
            "seed {seed}: a hole"
        );
        if level == Durability::Level1 {
            assert!(
                tags.len() >= acked.len(),
                "seed {seed}: acknowledged commit lost"
            );
        }
        drop(log);
        // The cut was durable: a second power cut finds nothing to cut.
        let fs3 = fs2.reboot(seed + 1, true);
        let (_, rep) = Log::open(fs3, o).unwrap();
        assert_eq!(rep.torn_bytes, 0, "seed {seed}");
    }
    assert!(torn_runs >= 10, "only {torn_runs} runs left a torn tail");
}

#[test]
fn garbage_after_the_last_record_within_the_in_flight_window_is_a_torn_tail() {
    let base = committed_log(100, 300);
    let (_, _, end) = layout(&base);
    // A partial frame (a plausible length word, garbage) and a scattered page of garbage.
    let fs = base.reboot(0, false);
    let mut junk = vec![0u8; 3000];
    junk[..4].copy_from_slice(&5000u32.to_le_bytes());
    for (i, b) in junk.iter_mut().enumerate().skip(FRAME_HEADER_LEN) {
        *b = (i * 31 % 251) as u8 | 1;
    }
    assert!(fs.corrupt(&seg_path(1), end, &junk));
    assert!(fs.corrupt(&seg_path(1), end + 9000, &[0xab; 4096]));
    let (log, rep) = Log::open(fs.clone(), opts(SEG, Durability::Level1)).unwrap();
    assert_eq!(rep.torn_bytes, 9000 + 4096);
    assert_eq!(rep.offset, end);
    assert_eq!(all_records(&log).len(), 100);
}

#[test]
fn a_sealed_segment_whose_records_stop_short_of_its_successor_is_refused_when_read() {
    let fs = SimFs::new();
    let log = open(&fs, opts(64 << 10, Durability::Level1));
    for i in 0..800 {
        log.commit(txn(i, 200)).unwrap();
    }
    let segs = log.segments();
    assert!(segs.len() > 2);
    let end1 = segs[0].end_lsn;
    log.shutdown().unwrap();
    drop(log);
    // Zero the last 600 bytes of segment 1's records: the file is whole, the header fine.
    let zero_from = 4096 + end1 - 600;
    assert!(fs.corrupt(&seg_path(1), zero_from, &[0u8; 600]));
    // Open only checks sealed segments' headers and sizes; a reader from the start refuses.
    let (log, _) = Log::open(fs.clone(), opts(64 << 10, Durability::Level1)).unwrap();
    let mut r = log
        .reader(onelog_log::ReadStart::Lsn(0), Default::default())
        .unwrap();
    let err = loop {
        match r.next() {
            Ok(Some(_)) => {}
            Ok(None) => panic!("read past the damage"),
            Err(e) => break e,
        }
    };
    match &err {
        LogError::Corrupt { path, offset, .. } => {
            assert_eq!(path, &seg_path(1), "{err}");
            assert!(*offset <= zero_from && *offset + 1000 > zero_from, "{err}");
        }
        e => panic!("expected Corrupt, got {e}"),
    }
}

/// Options with the idle SyncMark on (`LogOptions::idle_sync_mark`), as the server runs.
fn idle_opts(delay_ms: u64) -> LogOptions {
    LogOptions {
        idle_sync_mark: Some(std::time::Duration::from_millis(delay_ms)),
        ..opts(SEG, Durability::Level1)
    }
}

/// Waits (bounded) until the log has written `n` idle SyncMarks.
fn wait_idle_marks(log: &Log, n: u64) {
    for _ in 0..2000 {
        if log.stats().idle_marks >= n {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    panic!("no idle SyncMark after 4 s: {:?}", log.stats());
}

/// The offset of the last transaction, checking that the idle SyncMark follows it (past the
/// log's end: `layout` decodes whatever frames the file holds).
fn last_group_past_which_an_idle_mark_lies(offs: &[(u64, RecordKind)]) -> u64 {
    let n = offs.len();
    assert_eq!(offs[n - 1].1, RecordKind::SyncMark, "{offs:?}");
    assert_eq!(offs[n - 2].1, RecordKind::Transaction, "{offs:?}");
    offs[n - 2].0
}

/// `n` level-1 commits, then an idle period long enough for the idle mark, then a power cut.
fn idle_then_power_cut(n: u64, o: LogOptions, wait_for_mark: bool) -> Arc<SimFs> {
    let fs = SimFs::new();
    let log = open(&fs, o);
    for i in 0..n {
        log.commit(txn(i, 300)).unwrap();
    }
    if wait_for_mark {
        wait_idle_marks(&log, 1);
    }
    let fs2 = fs.reboot(1, false);
    drop(log);
    fs2
}

#[test]
fn damage_in_the_last_group_before_an_idle_period_is_refused_once_the_idle_mark_is_synced() {
    let base = idle_then_power_cut(50, idle_opts(5), true);
    let (offs, _, _) = layout(&base);
    let last = last_group_past_which_an_idle_mark_lies(&offs);
    let old = base.read_file(&seg_path(1)).unwrap();
    // A flipped byte in the middle of the last group, and a zeroed run at its end.
    let p = last + 40;
    assert_refused_then_cut(
        &base,
        p,
        &[old[p as usize] ^ 0x10],
        &offs,
        "flip in last group",
    );
    let tail_end = old.len().min((last + 200) as usize);
    let mut zeros = vec![0u8; tail_end - (last + 100) as usize];
    zeros.iter_mut().for_each(|b| *b = 0);
    assert_refused_then_cut(&base, last + 100, &zeros, &offs, "zeroed end of last group");

    // Without the idle mark, the same flip cannot be told from a torn write: it is cut (the
    // gap this closes; with the server's setting it never happens after the idle delay).
    let no_mark = idle_then_power_cut(50, opts(SEG, Durability::Level1), false);
    let (offs2, _, _) = layout(&no_mark);
    assert_eq!(
        offs2[..],
        offs[..offs.len() - 1],
        "same records with and without idle marks"
    );
    let fs = no_mark.reboot(0, false);
    assert!(fs.corrupt(&seg_path(1), p, &[old[p as usize] ^ 0x10]));
    let (log, rep) = Log::open(fs, opts(SEG, Durability::Level1)).unwrap();
    assert!(rep.torn_bytes > 0, "{rep:?}");
    assert_eq!(all_records(&log).len(), 49);
}

#[test]
fn idle_marks_change_no_byte_position_and_a_clean_reopen_reports_no_torn_bytes() {
    // The same commits, with idle periods (and marks) between them and without any.
    let with = SimFs::new();
    let without = SimFs::new();
    let log_a = open(&with, idle_opts(2));
    let log_b = open(&without, opts(SEG, Durability::Level1));
    for round in 0..5u64 {
        for i in 0..10 {
            log_a.commit(txn(round * 10 + i, 200)).unwrap();
            log_b.commit(txn(round * 10 + i, 200)).unwrap();
        }
        wait_idle_marks(&log_a, round + 1);
        assert_eq!(log_a.end_lsn(), log_b.end_lsn(), "round {round}");
        assert_eq!(log_a.segments(), log_b.segments(), "round {round}");
    }
    assert_eq!(log_a.stats().idle_marks, 5);
    // One extra fsync per idle period, none per commit.
    assert_eq!(log_a.stats().fsyncs, log_b.stats().fsyncs + 5);
    let end = 4096 + log_b.end_lsn() as usize;
    let a = with.read_file(&seg_path(1)).unwrap();
    let b = without.read_file(&seg_path(1)).unwrap();
    assert_eq!(a[..end], b[..end], "the records are byte for byte the same");
    assert_ne!(
        a[end..end + 25],
        b[end..end + 25],
        "the idle mark lies past the end"
    );
    let fs = with.reboot(3, false);
    drop(log_a);
    let (log, rep) = Log::open(fs, opts(SEG, Durability::Level1)).unwrap();
    assert_eq!(
        rep.torn_bytes, 0,
        "an idle mark is not a torn tail: {rep:?}"
    );
    assert_eq!(4096 + log.end_lsn() as usize, end);
    assert_eq!(all_records(&log).len(), 50);
}

#[test]
fn a_clean_shutdown_writes_the_mark_that_vouches_for_the_last_group() {
    // An idle delay far longer than the test: only the shutdown writes the mark.
    let fs = SimFs::new();
    let log = open(&fs, idle_opts(3_600_000));
    for i in 0..20 {
        log.commit(txn(i, 300)).unwrap();
    }
    assert_eq!(log.stats().idle_marks, 0);
    log.shutdown().unwrap();
    assert_eq!(log.stats().idle_marks, 1);
    drop(log);
    let base = fs.reboot(0, false);
    let (offs, _, _) = layout(&base);
    let last = last_group_past_which_an_idle_mark_lies(&offs);
    let old = base.read_file(&seg_path(1)).unwrap();
    let p = last + 20;
    assert_refused_then_cut(&base, p, &[old[p as usize] ^ 1], &offs, "after shutdown");
}
