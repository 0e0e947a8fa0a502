//! Fuzz target: arbitrary bytes into the verifiers a backup, `onelog check` and `onelog
//! restore` run over files they do not trust: the log's `RecordVerifier` (frames, GTID
//! continuity) and the engine's `CheckpointStreamCheck`. The property: no input, in any
//! chunking, makes them panic or buffer more than the run they were given. Random bytes rarely
//! carry a valid CRC32C, so each frame's CRC is also recomputed (`reseal`) before a second
//! pass, so the payload checks see the mutated bytes too.

#![no_main]

use libfuzzer_sys::fuzz_target;
use onelog_binlog::GtidState;
use onelog_engine::checkpoint::CheckpointStreamCheck;
use onelog_log::frame::mask_crc;
use onelog_log::verify::RecordVerifier;

/// Recomputes the CRC of every frame whose length fits, walking the bytes as frames.
fn reseal(mut buf: Vec<u8>) -> Vec<u8> {
    let mut at = 0usize;
    while at + 9 <= buf.len() {
        let len = u32::from_le_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]]) as usize;
        let Some(end) = at.checked_add(9).and_then(|s| s.checked_add(len)) else {
            break;
        };
        if len == 0 || end > buf.len() {
            break;
        }
        let crc = mask_crc(crc32c::crc32c(&buf[at + 8..end]));
        buf[at + 4..at + 8].copy_from_slice(&crc.to_le_bytes());
        at = end;
    }
    buf
}

fn verify(data: &[u8], chunk: usize) {
    let mut v = RecordVerifier::new(1000, 1000 + data.len() as u64, GtidState::new());
    for c in data.chunks(chunk) {
        if v.feed(c).is_err() {
            break;
        }
    }
    let _ = v.finish();
}

fuzz_target!(|input: &[u8]| {
    let Some((&first, data)) = input.split_first() else {
        return;
    };
    let chunk = usize::from(first % 64) + 1;
    verify(data, chunk);
    verify(&reseal(data.to_vec()), chunk);

    let mut c = CheckpointStreamCheck::new(u64::from(first));
    for part in data.chunks(chunk) {
        c.feed(part);
    }
    let _ = c.finish(std::path::Path::new("fuzz.ckpt"));
});
