//! The `ALGORITHM` and `LOCK` clauses of ALTER TABLE and CREATE INDEX: what each kind of change
//! accepts, as MariaDB 10.11 answers for an InnoDB table (measured on 10.11.19), where onelog
//! does what the clause asks, and a refusal with MariaDB's error where it cannot.
//!
//! Owns [`Clauses`] (the clauses of one statement) and the decisions per kind of change:
//! - an index added alone ([`Clauses::index_build`]): DEFAULT, INPLACE and `LOCK=NONE` build
//!   it beside commits ([`IndexLock::Online`]); `LOCK=SHARED`, `LOCK=EXCLUSIVE` and
//!   `ALGORITHM=COPY` hold commits for the build ([`IndexLock::Locked`]); INSTANT is 1846;
//! - a change that keeps every row and key (RENAME COLUMN, SET / DROP DEFAULT, DROP INDEX, a
//!   table rename): a catalog change only, so every algorithm and lock is honoured (a brief
//!   exclusive lock, as InnoDB's instant changes), but INSTANT with a dropped index (1846);
//! - a change that rewrites the rows (ADD / DROP COLUMN, MODIFY, a key added with other
//!   changes): onelog copies the rows with commits held, MariaDB's ALGORITHM=COPY with a
//!   lock, so INPLACE, INSTANT and `LOCK=NONE` are refused (1845), even where InnoDB could
//!   do them in place or instantly. (`ALGORITHM=NOCOPY` does not parse here: 1064.)
//!
//! Invariants: `ALGORITHM=COPY, LOCK=NONE` is 1846 for every change, checked first, as
//! MariaDB; a clause onelog accepts is one it honours.

use onelog_protocol::errors;
use sqlparser::ast;

use crate::error::SqlError;

use ast::{AlterTableAlgorithm as Algorithm, AlterTableLock as Lock};

/// The `ALGORITHM` and `LOCK` clauses of one statement (the last of each wins, as MariaDB).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clauses {
    algorithm: Algorithm,
    lock: Lock,
}

/// How an index added alone is built.
pub(crate) enum IndexLock {
    /// Beside commits (InnoDB's `LOCK=NONE`, what DEFAULT and INPLACE do).
    Online,
    /// With commits held for the whole build (`LOCK=SHARED` / `EXCLUSIVE`, `ALGORITHM=COPY`);
    /// `readers`: reads of the table outside a transaction go on (all but `LOCK=EXCLUSIVE`).
    Locked { readers: bool },
}

impl Clauses {
    /// Takes the clauses out of `ops`: the clauses and the other operations.
    pub(crate) fn split(
        ops: &[ast::AlterTableOperation],
    ) -> (Clauses, Vec<ast::AlterTableOperation>) {
        let mut c = Clauses {
            algorithm: Algorithm::Default,
            lock: Lock::Default,
        };
        let mut rest = Vec::with_capacity(ops.len());
        for o in ops {
            match o {
                ast::AlterTableOperation::Algorithm { algorithm, .. } => c.algorithm = *algorithm,
                ast::AlterTableOperation::Lock { lock, .. } => c.lock = *lock,
                other => rest.push(other.clone()),
            }
        }
        (c, rest)
    }

    /// Whether the statement had neither clause (or only their DEFAULT).
    pub(crate) fn is_default(&self) -> bool {
        matches!(
            (self.algorithm, self.lock),
            (Algorithm::Default, Lock::Default)
        )
    }

    /// Whether the table's reads outside a transaction may go on during the change (all but
    /// `LOCK=EXCLUSIVE`).
    pub(crate) fn lets_readers(&self) -> bool {
        self.lock != Lock::Exclusive
    }

    /// 1846 for `ALGORITHM=COPY, LOCK=NONE`, whatever the change.
    fn copy_needs_a_lock(&self) -> Result<(), SqlError> {
        match (self.algorithm, self.lock) {
            (Algorithm::Copy, Lock::None) => Err(refused(
                "LOCK=NONE",
                "COPY algorithm requires a lock",
                "LOCK=SHARED",
            )),
            _ => Ok(()),
        }
    }

    /// An index added alone (CREATE INDEX, a lone ALTER TABLE ADD INDEX / ADD UNIQUE).
    pub(crate) fn index_build(&self) -> Result<IndexLock, SqlError> {
        if self.algorithm == Algorithm::Instant {
            return Err(refused(
                "ALGORITHM=INSTANT",
                "ADD INDEX",
                "ALGORITHM=NOCOPY",
            ));
        }
        self.copy_needs_a_lock()?;
        Ok(match (self.algorithm, self.lock) {
            (_, Lock::Exclusive) => IndexLock::Locked { readers: false },
            (Algorithm::Copy, _) | (_, Lock::Shared) => IndexLock::Locked { readers: true },
            _ => IndexLock::Online,
        })
    }

    /// ENGINE=InnoDB / FORCE: MariaDB rebuilds the table in place (LOCK=NONE too), so only
    /// ALGORITHM=INSTANT is refused (1845, MariaDB's text).
    pub(crate) fn rebuild(&self) -> Result<(), SqlError> {
        match self.algorithm {
            Algorithm::Instant => Err(unsupported("ALGORITHM=INSTANT", "ALGORITHM=INPLACE")),
            _ => Ok(()),
        }
    }

    /// A change of the table's definition: `keeps_rows` when no row or key changes,
    /// `drops_index` when it drops an index.
    pub(crate) fn change(&self, keeps_rows: bool, drops_index: bool) -> Result<(), SqlError> {
        self.copy_needs_a_lock()?;
        if keeps_rows {
            if drops_index && self.algorithm == Algorithm::Instant {
                return Err(refused(
                    "ALGORITHM=INSTANT",
                    "DROP INDEX",
                    "ALGORITHM=NOCOPY",
                ));
            }
            return Ok(());
        }
        let algorithm = match self.algorithm {
            Algorithm::Default | Algorithm::Copy => None,
            Algorithm::Inplace => Some("ALGORITHM=INPLACE"),
            Algorithm::Instant => Some("ALGORITHM=INSTANT"),
        };
        if let Some(a) = algorithm {
            return Err(unsupported(a, "ALGORITHM=COPY"));
        }
        if self.lock == Lock::None {
            return Err(unsupported("LOCK=NONE", "LOCK=SHARED"));
        }
        Ok(())
    }
}

/// 1846 with MariaDB's reason.
fn refused(what: &str, why: &str, try_: &str) -> SqlError {
    SqlError::of(
        errors::ER_ALTER_OPERATION_NOT_SUPPORTED_REASON,
        format!("{what} is not supported. Reason: {why}. Try {try_}"),
    )
}

/// 1845, MariaDB's answer without a reason.
fn unsupported(what: &str, try_: &str) -> SqlError {
    SqlError::of(
        errors::ER_ALTER_OPERATION_NOT_SUPPORTED,
        format!("{what} is not supported for this operation. Try {try_}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clauses(algorithm: Algorithm, lock: Lock) -> Clauses {
        Clauses { algorithm, lock }
    }

    #[test]
    fn each_change_takes_what_onelog_honours() {
        use Algorithm as A;
        use Lock as L;
        let code = |r: Result<(), SqlError>| r.err().map_or(0, |e| e.code);
        // A catalog change takes everything but COPY without a lock.
        for a in [A::Default, A::Inplace, A::Instant, A::Copy] {
            for l in [L::Default, L::None, L::Shared, L::Exclusive] {
                let want = if (a, l) == (A::Copy, L::None) {
                    1846
                } else {
                    0
                };
                assert_eq!(code(clauses(a, l).change(true, false)), want, "{a:?} {l:?}");
            }
        }
        assert_eq!(
            code(clauses(A::Instant, L::Default).change(true, true)),
            1846
        );
        assert_eq!(code(clauses(A::Inplace, L::None).change(true, true)), 0);
        // A rewrite is a copy with a lock.
        for (a, l, want) in [
            (A::Default, L::Default, 0),
            (A::Copy, L::Shared, 0),
            (A::Default, L::Exclusive, 0),
            (A::Inplace, L::Default, 1845),
            (A::Instant, L::Default, 1845),
            (A::Default, L::None, 1845),
            (A::Copy, L::None, 1846),
        ] {
            assert_eq!(
                code(clauses(a, l).change(false, false)),
                want,
                "{a:?} {l:?}"
            );
        }
        let e = clauses(A::Inplace, L::None)
            .change(false, false)
            .unwrap_err();
        assert_eq!(
            e.message,
            "ALGORITHM=INPLACE is not supported for this operation. Try ALGORITHM=COPY"
        );
        // An index built alone.
        assert!(matches!(
            clauses(A::Inplace, L::None).index_build(),
            Ok(IndexLock::Online)
        ));
        assert!(matches!(
            clauses(A::Default, L::Exclusive).index_build(),
            Ok(IndexLock::Locked { readers: false })
        ));
        assert!(matches!(
            clauses(A::Copy, L::Default).index_build(),
            Ok(IndexLock::Locked { readers: true })
        ));
        assert_eq!(
            clauses(A::Instant, L::None)
                .index_build()
                .err()
                .unwrap()
                .code,
            1846
        );
    }
}
