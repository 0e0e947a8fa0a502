//! `mysql_native_password`, server side: the per-connection scramble and the check of a client's
//! response against the stored `SHA1(SHA1(password))`.
//!
//! The client sends `SHA1(pw) XOR SHA1(scramble ++ SHA1(SHA1(pw)))`. Knowing the stored hash `h`,
//! we XOR the response with `SHA1(scramble ++ h)` to recover `SHA1(pw)` and accept when its SHA-1
//! equals `h`. An account with an empty hash has no password and accepts only an empty response.
//! Invariants: the scramble is 20 bytes of printable ASCII without NUL (MariaDB's form, some
//! clients treat it as a C string); the comparison does not stop at the first differing byte.

use std::fs::File;
use std::io::Read;

use sha1::{Digest, Sha1};

/// The plugin onelog authenticates with.
pub const NATIVE_PLUGIN: &str = "mysql_native_password";

/// Scramble length of mysql_native_password (the handshake packet's).
pub const SCRAMBLE_LEN: usize = onelog_protocol::response::HANDSHAKE_SCRAMBLE_LEN;

/// A fresh random scramble (from the OS; falls back to a hash of time and a counter).
pub fn new_scramble(connection_id: u32) -> [u8; SCRAMBLE_LEN] {
    let mut raw = [0u8; SCRAMBLE_LEN];
    let ok = File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut raw))
        .is_ok();
    if !ok {
        use std::collections::hash_map::RandomState;
        use std::hash::{BuildHasher, Hasher};
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        for (i, chunk) in raw.chunks_mut(8).enumerate() {
            let mut h = RandomState::new().build_hasher();
            h.write_u128(now);
            h.write_u32(connection_id);
            h.write_usize(i);
            let v = h.finish().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }
    // Map to printable ASCII 0x21..=0x7E (94 values).
    let scramble = raw.map(|b| 0x21 + b % 94);
    debug_assert!(
        scramble.iter().all(|b| (0x21..=0x7E).contains(b)),
        "the scramble is printable ASCII without NUL"
    );
    scramble
}

/// True when `response` proves knowledge of the password whose double SHA-1 is `stored_hash`.
pub fn verify_native(scramble: &[u8], response: &[u8], stored_hash: &[u8]) -> bool {
    if stored_hash.is_empty() {
        return response.is_empty();
    }
    if response.len() != SCRAMBLE_LEN || stored_hash.len() != SCRAMBLE_LEN {
        return false;
    }
    let mut h = Sha1::new();
    h.update(scramble);
    h.update(stored_hash);
    let mask = h.finalize();
    let mut stage1 = [0u8; SCRAMBLE_LEN];
    for i in 0..SCRAMBLE_LEN {
        stage1[i] = response[i] ^ mask[i];
    }
    let check = Sha1::digest(stage1);
    let diff = check
        .iter()
        .zip(stored_hash)
        .fold(0u8, |acc, (a, b)| acc | (a ^ b));
    diff == 0
}

/// `SHA1(SHA1(password))`, the stored form of a password (used by tests and test backends).
pub fn native_hash(password: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    Sha1::digest(Sha1::digest(password)).to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use mysql_common::auth::plugins::mysql_native_password::scramble_native;

    #[test]
    fn response_from_mysql_common_client_scramble_verifies() {
        let scramble = new_scramble(1);
        let resp = scramble_native(&scramble, b"s3cret").unwrap();
        assert!(verify_native(&scramble, &resp, &native_hash(b"s3cret")));
        assert!(!verify_native(&scramble, &resp, &native_hash(b"other")));
        let other = new_scramble(2);
        assert!(!verify_native(&other, &resp, &native_hash(b"s3cret")));
    }

    #[test]
    fn empty_hash_accepts_only_empty_response() {
        assert!(verify_native(&[1; 20], b"", b""));
        assert!(!verify_native(&[1; 20], &[0; 20], b""));
        assert!(!verify_native(&[1; 20], b"", &native_hash(b"pw")));
    }

    #[test]
    fn scramble_is_printable_without_nul() {
        for id in 0..50 {
            assert!(new_scramble(id).iter().all(|&b| (0x21..=0x7E).contains(&b)));
        }
    }
}
