//! Decoding a whole event group: what the engine applies during recovery and what a replica
//! applies from its primary.
//!
//! An event group is a GTID event followed by the events of one transaction: Table_map,
//! Write/Update/Delete_rows (resolved against the Table_map of their table id that precedes
//! them in the group), Annotate_rows, and either an Xid (transactional commit) or, for DDL and
//! other standalone groups (`FL_STANDALONE`), a Query. [`decode_group`] checks every event's
//! size and checksum, requires the GTID event first and no second GTID event, and never
//! panics on bad input.
//!
//! Invariants: a decoded group starts with its GTID event and holds no second one; every rows
//! event is resolved against a Table_map that precedes it in the same group; [`decode_group`]
//! never panics (fuzzed through decode_event).

use std::collections::HashMap;
use std::sync::Arc;

use crate::error::DecodeError;
use crate::event::gtid::FL_STANDALONE;
use crate::event::{
    check_event, decode_event_with_header, event_type, split_events, AnnotateRowsEvent, Event,
    EventHeader, GtidEvent, QueryEvent, RowsEvent, TableMap,
};

/// Table maps by table id, as a reader of a stream of events keeps them.
#[derive(Debug, Clone, Default)]
pub struct TableMapCache {
    maps: HashMap<u64, Arc<TableMap>>,
}

impl TableMapCache {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records `map` (replacing an older map of the same id) and returns it shared.
    pub fn insert(&mut self, map: TableMap) -> Arc<TableMap> {
        let map = Arc::new(map);
        self.maps.insert(map.table_id, Arc::clone(&map));
        map
    }

    pub fn get(&self, table_id: u64) -> Option<&Arc<TableMap>> {
        self.maps.get(&table_id)
    }

    /// Forgets every map (at the end of a group or statement).
    pub fn clear(&mut self) {
        self.maps.clear();
    }
}

/// One event of a decoded group, in log order.
#[derive(Debug, Clone, PartialEq)]
pub enum GroupItem {
    /// A statement (DDL, or `BEGIN`/`COMMIT` of a non-transactional group).
    Query(QueryEvent),
    /// Row changes to `table`.
    Rows {
        table: Arc<TableMap>,
        event: RowsEvent,
    },
    AnnotateRows(AnnotateRowsEvent),
    /// The commit of a transactional group.
    Xid(u64),
    /// An event type the group decoder does not interpret (Intvar, Rand, User_var, ...).
    Other(EventHeader),
}

/// A decoded event group.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodedGroup {
    pub gtid: GtidEvent,
    /// Everything after the GTID event, Table_maps excepted (each Rows item carries its map).
    pub statements: Vec<GroupItem>,
}

impl DecodedGroup {
    /// True when the group ends with an Xid (a transactional commit).
    pub fn is_committed_transaction(&self) -> bool {
        matches!(self.statements.last(), Some(GroupItem::Xid(_)))
    }
}

/// Decodes one event group (exactly the bytes of its events).
pub fn decode_group(bytes: &[u8]) -> Result<DecodedGroup, DecodeError> {
    let mut maps = TableMapCache::new();
    let mut gtid = None;
    let mut statements = Vec::new();
    let mut offset = 0usize;
    for item in split_events(bytes) {
        let (_, ev) = item?;
        let at = offset;
        offset += ev.len();
        let with_offset = |mut e: DecodeError| {
            e.offset += at;
            e
        };
        let (h, event, _) = decode_event_with_header(ev).map_err(with_offset)?;
        match (event, gtid.is_some()) {
            (Event::Gtid(g), false) => gtid = Some(g),
            (Event::Gtid(_), true) => {
                return Err(DecodeError::new(
                    "event group",
                    at,
                    "second GTID event in one group",
                ));
            }
            (_, false) => {
                return Err(DecodeError::new(
                    "event group",
                    at,
                    "event group does not start with a GTID event",
                ))
            }
            (Event::TableMap(m), true) => {
                maps.insert(m);
            }
            (Event::Rows(raw), true) => {
                let table = maps.get(raw.table_id).cloned().ok_or_else(|| {
                    DecodeError::new(
                        "event group",
                        at,
                        format!(
                            "rows event for table id {} without a table map",
                            raw.table_id
                        ),
                    )
                })?;
                let event = raw.decode(&table).map_err(with_offset)?;
                statements.push(GroupItem::Rows { table, event });
            }
            (Event::Query(q), true) => statements.push(GroupItem::Query(q)),
            (Event::Xid(x), true) => statements.push(GroupItem::Xid(x.xid)),
            (Event::AnnotateRows(a), true) => statements.push(GroupItem::AnnotateRows(a)),
            (_, true) => statements.push(GroupItem::Other(h)),
        }
    }
    let gtid = gtid.ok_or_else(|| DecodeError::new("event group", 0, "empty event group"))?;
    Ok(DecodedGroup { gtid, statements })
}

/// Assembles event groups from a stream of whole events (a replica's relay stream, a binlog
/// file): feed every event with [`EventGroupDecoder::push`]; it returns the decoded group when
/// an event completes one. A group ends with an Xid, with the Query of a standalone group
/// (`FL_STANDALONE`, DDL), or with a `COMMIT` Query (non-transactional engines). Events outside
/// groups (Format_description, Rotate, Gtid_list, Binlog_checkpoint, Heartbeat) are ignored
/// here: decode them with `decode_event`.
#[derive(Debug, Clone, Default)]
pub struct EventGroupDecoder {
    buf: Vec<u8>,
    in_group: bool,
    standalone: bool,
}

impl EventGroupDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// True while a group has started and not ended.
    pub fn in_group(&self) -> bool {
        self.in_group
    }

    /// Drops a partial group (after a reconnect or a truncated file).
    pub fn reset(&mut self) {
        self.buf.clear();
        self.in_group = false;
        self.standalone = false;
    }

    /// Feeds one whole event. A GTID event while a group is open is an error (the open group
    /// is dropped and the new one started).
    pub fn push(&mut self, event: &[u8]) -> Result<Option<DecodedGroup>, DecodeError> {
        let (h, ev) = check_event(event)?;
        if h.event_type == event_type::GTID {
            let g = GtidEvent::decode(ev)?;
            let was_open = self.in_group;
            self.reset();
            self.buf.extend_from_slice(ev);
            self.in_group = true;
            self.standalone = g.flags2 & FL_STANDALONE != 0;
            if was_open {
                return Err(DecodeError::new(
                    "event group",
                    0,
                    "GTID event inside an unfinished event group",
                ));
            }
            return Ok(None);
        }
        if !self.in_group {
            return Ok(None);
        }
        self.buf.extend_from_slice(ev);
        let ends = match h.event_type {
            event_type::XID => true,
            event_type::QUERY => {
                self.standalone
                    || QueryEvent::decode(ev).is_ok_and(|q| q.query.eq_ignore_ascii_case("COMMIT"))
            }
            _ => false,
        };
        if !ends {
            return Ok(None);
        }
        let group = decode_group(&self.buf);
        self.reset();
        group.map(Some)
    }
}
