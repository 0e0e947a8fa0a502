//! Fuzz target: arbitrary bytes into the MySQL protocol decoders (packet framing, handshake
//! response, COM_CHANGE_USER, COM_STMT_EXECUTE parameters, COM_STMT_SEND_LONG_DATA,
//! COM_REGISTER_SLAVE, COM_BINLOG_DUMP, semi-sync ACKs). The
//! property is that decoders never panic and never read out of bounds on any input; results
//! are ignored. `onelog_server::command::exercise_decoders` is the shared entry point, which
//! `crates/server`'s proptests also drive in CI.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    onelog_server::command::exercise_decoders(data);
});
