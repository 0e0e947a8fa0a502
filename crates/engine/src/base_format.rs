//! The layout of the paged store's records in the base (docs/PAGED_STORE.md, step 3, piece 1;
//! the server does not use it yet). `base.rs` stores bytes; this module says what they are.
//!
//! Keys (each starts at [`FIRST_DATA_BYTE`] or above, so none is ever a meta record's):
//! - a row: [`ROW_KIND`] ++ the table's storage id (u64 BE; `table_view.rs`: a table gets a
//!   new one when DDL empties or rewrites it) ++ its storage key (`store.rs`: the primary key
//!   bytes, or a table without primary key's hidden key);
//! - an index entry: [`INDEX_KIND`] ++ storage id (u64 BE) ++ index id (u32 BE) ++ the entry
//!   bytes (`store.rs`: index key ++ storage key).
//!
//! Values:
//! - a row: a varint column count, then each value (`encoding.rs`' value encoding, as in the
//!   checkpoint file's body);
//! - an index entry: a varint, the length of the entry's index key part (`IndexEntry::klen`).
//!
//! Invariants: decoding what was encoded gives back the same parts; the rows of one table are
//! one contiguous key range, and so are one index's entries; inside it the keys order as the
//! storage keys (or entry bytes) do, so a range read of the base returns rows in the order the
//! delta's maps hold them, and a storage-key range maps onto exactly the base keys of the same
//! rows ([`row_range`], [`entry_range`]); a record that does not decode is a [`FormatError`]
//! naming what was wrong, never a different row.

use std::ops::Bound;

use onelog_binlog::Value;

use crate::base::FIRST_DATA_BYTE;
use crate::encoding::{put_value, put_var, FormatError, Reader};
use crate::key::prefix_end;
use crate::key::ByteRange;

/// The id a table's records are kept under in the base (`table_view.rs`).
pub type StorageId = u64;

/// First byte of a row's key.
pub const ROW_KIND: u8 = FIRST_DATA_BYTE;
/// First byte of an index entry's key.
pub const INDEX_KIND: u8 = FIRST_DATA_BYTE + 1;

fn table_prefix(kind: u8, storage: StorageId) -> Vec<u8> {
    let mut k = Vec::with_capacity(32);
    k.push(kind);
    k.extend_from_slice(&storage.to_be_bytes());
    k
}

fn index_prefix(storage: StorageId, index: u32) -> Vec<u8> {
    let mut k = table_prefix(INDEX_KIND, storage);
    k.extend_from_slice(&index.to_be_bytes());
    k
}

/// The base key of the row of the table kept under `storage` with storage key `pk`.
pub fn row_key(storage: StorageId, pk: &[u8]) -> Vec<u8> {
    let mut k = table_prefix(ROW_KIND, storage);
    k.extend_from_slice(pk);
    k
}

/// The base key of the entry `entry` (index key ++ storage key) of index `index` of the table
/// kept under `storage`.
pub fn entry_key(storage: StorageId, index: u32, entry: &[u8]) -> Vec<u8> {
    let mut k = index_prefix(storage, index);
    k.extend_from_slice(entry);
    k
}

/// The storage key of a row's base key under `storage` (None: it is not one of that table's
/// rows).
pub fn row_key_pk(storage: StorageId, key: &[u8]) -> Option<&[u8]> {
    key.strip_prefix(table_prefix(ROW_KIND, storage).as_slice())
}

/// The entry bytes of an index entry's base key (None: not an entry of that index).
pub fn entry_key_entry(storage: StorageId, index: u32, key: &[u8]) -> Option<&[u8]> {
    key.strip_prefix(index_prefix(storage, index).as_slice())
}

/// What a base key names ([`parse_key`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BaseKey<'a> {
    /// A row of the table kept under `storage`, with its storage key.
    Row { storage: StorageId, pk: &'a [u8] },
    /// An entry of index `index` of that table, with its entry bytes.
    Entry {
        storage: StorageId,
        index: u32,
        entry: &'a [u8],
    },
}

/// The parts of a data key of the base: a row's or an index entry's (None: a key of neither
/// layout, too short or of an unknown kind).
pub fn parse_key(key: &[u8]) -> Option<BaseKey<'_>> {
    let (&kind, rest) = key.split_first()?;
    let (storage, rest) = rest.split_first_chunk::<8>()?;
    let storage = StorageId::from_be_bytes(*storage);
    match kind {
        ROW_KIND => Some(BaseKey::Row { storage, pk: rest }),
        INDEX_KIND => {
            let (index, entry) = rest.split_first_chunk::<4>()?;
            Some(BaseKey::Entry {
                storage,
                index: u32::from_be_bytes(*index),
                entry,
            })
        }
        _ => None,
    }
}

/// The base keys of every record kept under `storage`: its rows, then its index entries.
pub fn storage_ranges(storage: StorageId) -> [ByteRange; 2] {
    let all = (Bound::Unbounded, Bound::Unbounded);
    [
        under(table_prefix(ROW_KIND, storage), &all),
        under(table_prefix(INDEX_KIND, storage), &all),
    ]
}

/// The base keys of every record kept under a storage id at or above `storage`: rows, then
/// index entries.
pub fn unclaimed_ranges(storage: StorageId) -> [ByteRange; 2] {
    let from = |kind: u8| -> ByteRange {
        (
            Bound::Included(table_prefix(kind, storage)),
            Bound::Excluded(vec![kind + 1]),
        )
    };
    [from(ROW_KIND), from(INDEX_KIND)]
}

/// `range` of keys under `prefix`: each bound prefixed, an unbounded end the prefix's own.
fn under(prefix: Vec<u8>, range: &ByteRange) -> ByteRange {
    let with = |b: &[u8]| {
        let mut k = prefix.clone();
        k.extend_from_slice(b);
        k
    };
    let lo = match &range.0 {
        Bound::Included(b) => Bound::Included(with(b)),
        Bound::Excluded(b) => Bound::Excluded(with(b)),
        Bound::Unbounded => Bound::Included(prefix.clone()),
    };
    let hi = match &range.1 {
        Bound::Included(b) => Bound::Included(with(b)),
        Bound::Excluded(b) => Bound::Excluded(with(b)),
        Bound::Unbounded => prefix_end(&prefix).map_or(Bound::Unbounded, Bound::Excluded),
    };
    (lo, hi)
}

/// The base keys of the rows kept under `storage` whose storage keys lie in `range`.
pub fn row_range(storage: StorageId, range: &ByteRange) -> ByteRange {
    under(table_prefix(ROW_KIND, storage), range)
}

/// The base keys of the entries of index `index` under `storage` whose entry bytes lie in
/// `range`.
pub fn entry_range(storage: StorageId, index: u32, range: &ByteRange) -> ByteRange {
    under(index_prefix(storage, index), range)
}

/// A row's value.
pub fn encode_row(row: &[Value]) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + 8 * row.len());
    put_var(&mut out, row.len() as u64);
    for v in row {
        put_value(&mut out, v);
    }
    out
}

/// The row in a row's value; it must have `columns` columns and nothing after them.
pub fn decode_row(value: &[u8], columns: usize) -> Result<Vec<Value>, FormatError> {
    let mut r = Reader::new(value, "base row");
    let n = r.count(1)?;
    if n != columns {
        return Err(r.err(format!("row has {n} columns, its table {columns}")));
    }
    let mut row = Vec::with_capacity(n);
    for _ in 0..n {
        row.push(r.value()?);
    }
    if !r.is_empty() {
        return Err(r.err(format!("{} bytes after the row", r.remaining())));
    }
    Ok(row)
}

/// An index entry's value: the length of its index key part.
pub fn encode_entry(klen: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(5);
    put_var(&mut out, u64::from(klen));
    out
}

/// The index key length in an entry's value; it must fit in the entry bytes (`entry_len`).
pub fn decode_entry(value: &[u8], entry_len: usize) -> Result<u32, FormatError> {
    let mut r = Reader::new(value, "base index entry");
    let klen = r.var()?;
    if !r.is_empty() || klen > entry_len as u64 {
        return Err(r.err(format!(
            "index key length {klen} for an entry of {entry_len} bytes ({} bytes follow)",
            r.remaining()
        )));
    }
    Ok(klen as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::bounds_empty;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn borrowed(r: &ByteRange) -> (Bound<&[u8]>, Bound<&[u8]>) {
        crate::key::borrowed(r)
    }

    fn in_range(k: &[u8], r: &ByteRange) -> bool {
        use std::ops::RangeBounds;
        let (lo, hi) = borrowed(r);
        (lo, hi).contains(k)
    }

    #[test]
    fn keys_and_values_round_trip_and_never_use_the_meta_prefix() {
        let pk = [0x80, 0, 0, 0, 0, 0, 0, 7];
        let k = row_key(3, &pk);
        assert!(k[0] >= FIRST_DATA_BYTE);
        assert_eq!(row_key_pk(3, &k), Some(&pk[..]));
        assert_eq!(row_key_pk(4, &k), None, "another table's row");
        let e = entry_key(3, 2, b"idx++pk");
        assert!(e[0] >= FIRST_DATA_BYTE);
        assert_eq!(entry_key_entry(3, 2, &e), Some(&b"idx++pk"[..]));
        assert_eq!(entry_key_entry(3, 1, &e), None, "another index's entry");
        assert_eq!(row_key_pk(3, &e), None, "an entry is not a row");
        let row = vec![
            Value::Int(-5),
            Value::Null,
            Value::bytes(b"text"),
            Value::UInt(u64::MAX),
        ];
        assert_eq!(decode_row(&encode_row(&row), 4).unwrap(), row);
        assert_eq!(decode_entry(&encode_entry(3), 7).unwrap(), 3);
    }

    #[test]
    fn bad_values_are_errors_never_other_rows() {
        let row = encode_row(&[Value::Int(1), Value::bytes(b"abc")]);
        let e = decode_row(&row, 3).unwrap_err().to_string();
        assert!(e.contains("row has 2 columns, its table 3"), "{e}");
        for cut in 0..row.len() {
            assert!(decode_row(&row[..cut], 2).is_err(), "cut at {cut}");
        }
        let mut longer = row.clone();
        longer.push(0);
        assert!(decode_row(&longer, 2)
            .unwrap_err()
            .to_string()
            .contains("after the row"));
        assert!(
            decode_entry(&encode_entry(9), 8).is_err(),
            "longer than the entry"
        );
        assert!(decode_entry(&[], 8).is_err());
        assert!(decode_entry(&[3, 0], 8).is_err(), "a byte after the length");
    }

    #[test]
    fn a_table_and_an_index_are_contiguous_ranges_apart_from_their_neighbours() {
        let all: ByteRange = (Bound::Unbounded, Bound::Unbounded);
        let rows = row_range(5, &all);
        let entries = entry_range(5, 1, &all);
        assert!(in_range(&row_key(5, b""), &rows));
        assert!(in_range(&row_key(5, &[0xff; 40]), &rows));
        assert!(!in_range(&row_key(4, &[0xff; 40]), &rows));
        assert!(!in_range(&row_key(6, b""), &rows));
        assert!(!in_range(&entry_key(5, 1, b""), &rows));
        assert!(in_range(&entry_key(5, 1, &[0xff; 9]), &entries));
        assert!(!in_range(&entry_key(5, 2, b""), &entries));
        assert!(!in_range(&entry_key(5, 0, &[0xff; 9]), &entries));
        // The last table id and index id have no successor prefix: the range is open-ended.
        let last = row_range(StorageId::MAX, &all);
        assert!(in_range(&row_key(StorageId::MAX, &[0xff; 3]), &last));
        assert!(!bounds_empty(borrowed(&last).0, borrowed(&last).1));
    }

    fn bound() -> impl Strategy<Value = Bound<Vec<u8>>> {
        let key = proptest::collection::vec(0u8..4, 0..4);
        prop_oneof![
            Just(Bound::Unbounded),
            key.clone().prop_map(Bound::Included),
            key.prop_map(Bound::Excluded),
        ]
    }

    proptest! {
        /// A storage-key range picks in the base exactly the rows it picks among the storage
        /// keys, and the base keys order as the storage keys do.
        #[test]
        fn ranges_map_onto_the_same_rows_in_the_same_order(
            pks in proptest::collection::btree_set(proptest::collection::vec(0u8..4, 0..4), 0..20),
            lo in bound(),
            hi in bound(),
        ) {
            let range: ByteRange = (lo, hi);
            let base = row_range(7, &range);
            let keys: BTreeSet<Vec<u8>> = pks
                .iter()
                .map(|pk| row_key(7, pk))
                .chain([row_key(6, &[3]), row_key(8, &[]), entry_key(7, 1, &[0])])
                .collect();
            let want: Vec<&Vec<u8>> = pks.iter().filter(|pk| in_range(pk, &range)).collect();
            let got: Vec<&[u8]> = keys
                .iter()
                .filter(|k| in_range(k, &base))
                .map(|k| row_key_pk(7, k).expect("only table 7's rows"))
                .collect();
            prop_assert_eq!(got, want.iter().map(|v| v.as_slice()).collect::<Vec<_>>());
        }
    }
}
