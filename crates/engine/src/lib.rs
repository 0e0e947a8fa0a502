//! onelog's engine (placeholder; being built).
