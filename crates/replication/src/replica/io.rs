//! The IO thread (see the module docs of `replica`).
