//! The name of the schema onelog computes rather than stores (`information_schema`) and the
//! one test of a name against it. A leaf (it imports nothing of this crate), so the session
//! (`context`), SHOW DATABASES (`execute::admin::show`), LOCK TABLES (`table_locks`) and
//! `infoschema` itself all read the name from here without an import circle.
//!
//! Invariant: the name is matched ASCII case-insensitively, as MariaDB matches it.

/// The database name `information_schema`.
pub(crate) const INFORMATION_SCHEMA: &str = "information_schema";

/// Whether `name` is `information_schema` (ASCII case-insensitive, as MariaDB).
pub(crate) fn is_information_schema(name: &str) -> bool {
    name.eq_ignore_ascii_case(INFORMATION_SCHEMA)
}
