#!/usr/bin/env bash
# Bounded fuzzing run for CI: builds the cargo-fuzz targets in fuzz/ with libFuzzer's coverage
# instrumentation on the stable toolchain (no nightly, no cargo-fuzz needed: the flags below are
# what `cargo fuzz build --sanitizer none` passes, all stable), then runs each target for
# FUZZ_SECONDS (default 60 for sql_frontend, 15 for the decoders and the backup verifiers).
# Exits non-zero if libFuzzer finds a crash, a panic, a stack overflow or a timeout; the crashing input is left in
# fuzz/artifacts/<target>/ (add it as a regression test).
#
# Locally with cargo-fuzz installed, the same targets run with
#   cargo fuzz run sql_frontend --sanitizer none -- -max_total_time=60   (in fuzz/)
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

TRIPLE="$(rustc -vV | sed -n 's/^host: //p')"
SQL_SECONDS="${FUZZ_SECONDS:-60}"
DECODER_SECONDS="${FUZZ_DECODER_SECONDS:-15}"

export RUSTFLAGS="--cfg fuzzing -Cpasses=sancov-module \
 -Cllvm-args=-sanitizer-coverage-level=4 \
 -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
 -Cllvm-args=-sanitizer-coverage-pc-table \
 -Cllvm-args=-sanitizer-coverage-trace-compares \
 -Cdebug-assertions -Coverflow-checks"
# --target keeps the instrumentation off build scripts and proc macros (as cargo-fuzz does).
echo "== fuzz: build ($TRIPLE)"
cargo build --release --target "$TRIPLE" --bins

BIN="target/$TRIPLE/release"
run() {
    local target="$1" seconds="$2"
    mkdir -p "corpus/$target" "artifacts/$target"
    echo "== fuzz: $target for ${seconds}s"
    # -rss_limit_mb: a statement that grows memory without bound is a finding too.
    "$BIN/$target" "corpus/$target" -max_total_time="$seconds" -timeout=10 \
        -rss_limit_mb=2048 -max_len=4096 -artifact_prefix="artifacts/$target/" -print_final_stats=1
}
run sql_frontend "$SQL_SECONDS"
run decode_event "$DECODER_SECONDS"
run decode_packet "$DECODER_SECONDS"
run verify_backup "$DECODER_SECONDS"
echo "== fuzz: no crash found"
