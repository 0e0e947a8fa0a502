//! Views: the stored definition of a `CREATE VIEW` ([`ViewDef`]) and its bytes.
//!
//! The engine only stores views: a view has no rows and no table id. The catalog keeps them
//! by `(database, name)` beside the tables (a name is a table's or a view's, never both); the
//! SQL layer parses and compiles [`ViewDef::query`] at each use (a stored derived table).
//!
//! Owned here: [`ViewDef`] and its encoding, used by the catalog changes of tags 50..=52
//! (`catalog.rs`) and by the catalog's own encoding (catalog format 4), so checkpoints keep
//! views.
//!
//! Invariants: `columns` is non-empty with names unique ASCII case-insensitively (checked by
//! [`ViewDef::check_consistent`], which the catalog asserts); decoding never panics and never
//! trusts a length.

use crate::encoding::{put_str, put_u8, put_var, FormatError, Reader};

/// `ALGORITHM=` of a view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViewAlgorithm {
    Undefined,
    Merge,
    TempTable,
}

impl ViewAlgorithm {
    /// The keyword MariaDB prints.
    pub fn sql(self) -> &'static str {
        match self {
            ViewAlgorithm::Undefined => "UNDEFINED",
            ViewAlgorithm::Merge => "MERGE",
            ViewAlgorithm::TempTable => "TEMPTABLE",
        }
    }
}

/// `WITH [CASCADED | LOCAL] CHECK OPTION` of a view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViewCheck {
    None,
    Local,
    Cascaded,
}

/// A view's definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewDef {
    pub db: String,
    pub name: String,
    /// The view's column names in order, fixed at CREATE VIEW (its column list, else the
    /// SELECT's result names).
    pub columns: Vec<String>,
    /// The SELECT as written after `AS` (without `WITH ... CHECK OPTION`).
    pub query: String,
    /// The database the SELECT's unqualified table names resolve against: the creating
    /// session's current database (empty when it had none).
    pub query_db: String,
    pub algorithm: ViewAlgorithm,
    /// `DEFINER=`: (user, host).
    pub definer: (String, String),
    /// `SQL SECURITY INVOKER` (else DEFINER).
    pub invoker: bool,
    pub check: ViewCheck,
}

/// Format byte of one encoded view (the first; later formats may add trailing fields).
const VIEW_FORMAT: u8 = 1;

impl ViewDef {
    /// The view's bytes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_u8(out, VIEW_FORMAT);
        put_str(out, &self.db);
        put_str(out, &self.name);
        put_var(out, self.columns.len() as u64);
        for c in &self.columns {
            put_str(out, c);
        }
        put_str(out, &self.query);
        put_str(out, &self.query_db);
        put_u8(
            out,
            match self.algorithm {
                ViewAlgorithm::Undefined => 0,
                ViewAlgorithm::Merge => 1,
                ViewAlgorithm::TempTable => 2,
            },
        );
        put_str(out, &self.definer.0);
        put_str(out, &self.definer.1);
        put_u8(out, u8::from(self.invoker));
        put_u8(
            out,
            match self.check {
                ViewCheck::None => 0,
                ViewCheck::Local => 1,
                ViewCheck::Cascaded => 2,
            },
        );
    }

    /// Decodes [`encode`](Self::encode)'s bytes.
    pub fn decode(r: &mut Reader<'_>) -> Result<ViewDef, FormatError> {
        let format = r.u8()?;
        if format != VIEW_FORMAT {
            return Err(r.err(format!("unknown view format {format}")));
        }
        let db = r.string()?;
        let name = r.string()?;
        let n = r.count(1)?;
        let mut columns = Vec::with_capacity(n);
        for _ in 0..n {
            columns.push(r.string()?);
        }
        let query = r.string()?;
        let query_db = r.string()?;
        let algorithm = match r.u8()? {
            0 => ViewAlgorithm::Undefined,
            1 => ViewAlgorithm::Merge,
            2 => ViewAlgorithm::TempTable,
            a => return Err(r.err(format!("unknown view algorithm {a}"))),
        };
        let definer = (r.string()?, r.string()?);
        let invoker = match r.u8()? {
            0 => false,
            1 => true,
            s => return Err(r.err(format!("unknown view security {s}"))),
        };
        let check = match r.u8()? {
            0 => ViewCheck::None,
            1 => ViewCheck::Local,
            2 => ViewCheck::Cascaded,
            c => return Err(r.err(format!("unknown view check option {c}"))),
        };
        let v = ViewDef {
            db,
            name,
            columns,
            query,
            query_db,
            algorithm,
            definer,
            invoker,
            check,
        };
        v.check_consistent().map_err(|e| r.err(e))?;
        Ok(v)
    }

    /// The invariants of the module docs.
    pub fn check_consistent(&self) -> Result<(), String> {
        if self.columns.is_empty() {
            return Err(format!("view {}.{} without columns", self.db, self.name));
        }
        for (i, c) in self.columns.iter().enumerate() {
            if self.columns[..i].iter().any(|d| d.eq_ignore_ascii_case(c)) {
                return Err(format!(
                    "view {}.{}: duplicate column {c}",
                    self.db, self.name
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample() -> ViewDef {
        ViewDef {
            db: "d".into(),
            name: "v".into(),
            columns: vec!["a".into(), "b c".into()],
            query: "select a, b as `b c` from t where a > 1".into(),
            query_db: "d".into(),
            algorithm: ViewAlgorithm::Merge,
            definer: ("root".into(), "localhost".into()),
            invoker: true,
            check: ViewCheck::Cascaded,
        }
    }

    #[test]
    fn view_definition_round_trips() {
        let v = sample();
        let mut b = Vec::new();
        v.encode(&mut b);
        let mut r = Reader::new(&b, "view");
        assert_eq!(ViewDef::decode(&mut r).unwrap(), v);
        assert!(r.is_empty());
    }

    #[test]
    fn view_decoding_refuses_bad_bytes_without_panicking() {
        let mut b = Vec::new();
        sample().encode(&mut b);
        for cut in 0..b.len() {
            assert!(ViewDef::decode(&mut Reader::new(&b[..cut], "view")).is_err());
        }
        let mut bad = b.clone();
        bad[0] = 9;
        assert!(ViewDef::decode(&mut Reader::new(&bad, "view")).is_err());
    }
}
