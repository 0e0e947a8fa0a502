//! onelog's write-ahead log (placeholder; being built).
