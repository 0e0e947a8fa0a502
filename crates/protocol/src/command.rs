//! Command bytes: the first byte of every client packet after the handshake (MariaDB's
//! `enum_server_command`, `include/my_command.h`).
//!
//! Invariant: `Command::from_byte(c as u8) == Some(c)` for every command, and no two
//! commands share a byte (asserted at compile time over the byte table; a unit test checks
//! both).

/// A client command. The discriminant is the byte on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Command {
    Sleep = 0x00,
    Quit = 0x01,
    InitDb = 0x02,
    Query = 0x03,
    FieldList = 0x04,
    CreateDb = 0x05,
    DropDb = 0x06,
    Refresh = 0x07,
    Shutdown = 0x08,
    Statistics = 0x09,
    ProcessInfo = 0x0A,
    Connect = 0x0B,
    ProcessKill = 0x0C,
    Debug = 0x0D,
    Ping = 0x0E,
    Time = 0x0F,
    DelayedInsert = 0x10,
    ChangeUser = 0x11,
    /// COM_BINLOG_DUMP: a replica or CDC client asks for the binlog stream.
    BinlogDump = 0x12,
    TableDump = 0x13,
    ConnectOut = 0x14,
    /// COM_REGISTER_SLAVE: a replica announces itself (SHOW SLAVE HOSTS).
    RegisterSlave = 0x15,
    StmtPrepare = 0x16,
    StmtExecute = 0x17,
    StmtSendLongData = 0x18,
    StmtClose = 0x19,
    StmtReset = 0x1A,
    SetOption = 0x1B,
    StmtFetch = 0x1C,
    Daemon = 0x1D,
    /// MariaDB: unused (MySQL's COM_BINLOG_DUMP_GTID; MariaDB replicas use BinlogDump with
    /// `@slave_connect_state`).
    Unimplemented = 0x1E,
    ResetConnection = 0x1F,
    /// MariaDB's COM_STMT_BULK_EXECUTE (array binding).
    StmtBulkExecute = 0xFA,
}

const ALL: [Command; 33] = [
    Command::Sleep,
    Command::Quit,
    Command::InitDb,
    Command::Query,
    Command::FieldList,
    Command::CreateDb,
    Command::DropDb,
    Command::Refresh,
    Command::Shutdown,
    Command::Statistics,
    Command::ProcessInfo,
    Command::Connect,
    Command::ProcessKill,
    Command::Debug,
    Command::Ping,
    Command::Time,
    Command::DelayedInsert,
    Command::ChangeUser,
    Command::BinlogDump,
    Command::TableDump,
    Command::ConnectOut,
    Command::RegisterSlave,
    Command::StmtPrepare,
    Command::StmtExecute,
    Command::StmtSendLongData,
    Command::StmtClose,
    Command::StmtReset,
    Command::SetOption,
    Command::StmtFetch,
    Command::Daemon,
    Command::Unimplemented,
    Command::ResetConnection,
    Command::StmtBulkExecute,
];

// The invariant, checked when the crate compiles: `ALL[b]` is the command of byte `b` for
// 0x00..=0x1F (what `from_byte` relies on), and the last entry is the only one above.
const _: () = {
    let mut i = 0;
    while i < 0x20 {
        assert!(ALL[i] as u8 as usize == i, "Command::ALL out of byte order");
        i += 1;
    }
    assert!(ALL.len() == 0x21 && ALL[0x20] as u8 == 0xFA);
};

impl Command {
    /// The command a packet's first byte names, if any.
    pub fn from_byte(b: u8) -> Option<Command> {
        match b {
            0x00..=0x1F => Some(ALL[b as usize]),
            0xFA => Some(Command::StmtBulkExecute),
            _ => None,
        }
    }

    /// The byte on the wire.
    pub fn byte(self) -> u8 {
        self as u8
    }

    /// MariaDB's name for it, as SHOW PROCESSLIST's Command column and the general log
    /// write it (`Query`, `Binlog Dump`, ...).
    pub fn name(self) -> &'static str {
        use Command::*;
        match self {
            Sleep => "Sleep",
            Quit => "Quit",
            InitDb => "Init DB",
            Query => "Query",
            FieldList => "Field List",
            CreateDb => "Create DB",
            DropDb => "Drop DB",
            Refresh => "Refresh",
            Shutdown => "Shutdown",
            Statistics => "Statistics",
            ProcessInfo => "Processlist",
            Connect => "Connect",
            ProcessKill => "Kill",
            Debug => "Debug",
            Ping => "Ping",
            Time => "Time",
            DelayedInsert => "Delayed insert",
            ChangeUser => "Change user",
            BinlogDump => "Binlog Dump",
            TableDump => "Table Dump",
            ConnectOut => "Connect Out",
            RegisterSlave => "Register Slave",
            StmtPrepare => "Prepare",
            StmtExecute => "Execute",
            StmtSendLongData => "Long Data",
            StmtClose => "Close stmt",
            StmtReset => "Reset stmt",
            SetOption => "Set option",
            StmtFetch => "Fetch",
            Daemon => "Daemon",
            Unimplemented => "Unimpl get tid",
            ResetConnection => "Reset connection",
            StmtBulkExecute => "Bulk_execute",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_round_trips_through_its_byte_and_bytes_are_distinct() {
        let mut seen = std::collections::HashSet::new();
        for c in ALL {
            assert_eq!(Command::from_byte(c.byte()), Some(c), "{c:?}");
            assert!(seen.insert(c.byte()), "{c:?} shares its byte");
        }
        assert_eq!(Command::from_byte(0x20), None);
        assert_eq!(Command::from_byte(0xFF), None);
        // The bytes a MariaDB client and replica send (mysql_com.h).
        assert_eq!(Command::Query.byte(), 3);
        assert_eq!(Command::BinlogDump.byte(), 18);
        assert_eq!(Command::RegisterSlave.byte(), 21);
        assert_eq!(Command::ResetConnection.byte(), 31);
        assert_eq!(Command::StmtBulkExecute.byte(), 250);
    }
}
