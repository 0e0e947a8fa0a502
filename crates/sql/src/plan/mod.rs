//! Planning.
pub(crate) mod access;
