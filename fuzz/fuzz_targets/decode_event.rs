//! Fuzz target: arbitrary bytes into every binlog decoder. The property is the crate's
//! invariant that decoders never panic (and never read out of bounds) on any input; results
//! are ignored. Because random bytes rarely carry a valid CRC32, the input is also fed with
//! the checksum recomputed (`reseal`), so the body parsers see the mutated bytes too.
//! `crates/binlog/tests/robustness.rs` checks the same property in CI with proptest.

#![no_main]

use libfuzzer_sys::fuzz_target;
use onelog_binlog::event::statement_vars::decode_statement_var;
use onelog_binlog::event::{decode_event, reseal, RowsEvent, TableMap};
use onelog_binlog::{decode_group, Event};

fuzz_target!(|data: &[u8]| {
    let _ = decode_event(data);
    let _ = decode_group(data);

    // The same bytes with a correct size and checksum, so they get past `check_event`.
    let mut ev = data.to_vec();
    if ev.len() >= 23 {
        let n = ev.len() as u32;
        ev[9..13].copy_from_slice(&n.to_le_bytes());
        reseal(&mut ev);
        if let Ok((Event::TableMap(map), _)) = decode_event(&ev) {
            // A table map that decodes: also try the bytes as rows of that table.
            let _ = RowsEvent::decode(&ev, &map);
        }
        let _ = decode_event(&ev);
        let _ = decode_group(&ev);
        let _ = TableMap::decode(&ev);
        // A replica's statement context (Intvar, Rand, User_var) in any event type.
        for t in [5u8, 13, 14] {
            ev[4] = t;
            reseal(&mut ev);
            let _ = decode_statement_var(&ev);
        }
    }
});
