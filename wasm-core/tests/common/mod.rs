//! Helpers shared by the integration tests: seeded data and the shared test vectors.
#![allow(dead_code)]

use rand::{RngCore, SeedableRng, rngs::StdRng};
use std::path::PathBuf;

pub fn rng(seed: u64) -> StdRng {
    StdRng::seed_from_u64(seed)
}

pub fn random_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut buf = vec![0u8; len];
    rng(seed).fill_bytes(&mut buf);
    buf
}

/// Text-like bytes: words from a small vocabulary, so zstd has something to find.
pub fn text_bytes(seed: u64, len: usize) -> Vec<u8> {
    const WORDS: &[&str] = &[
        "kura", "store", "chunk", "digest", "the", "of", "and", "content", "address", "pack",
        "fn", "let", "const", "return", "{", "}", "(", ")", ";", "\n", "import", "export",
    ];
    let mut r = rng(seed);
    let mut out = Vec::with_capacity(len + 16);
    while out.len() < len {
        out.extend_from_slice(WORDS[(r.next_u32() as usize) % WORDS.len()].as_bytes());
        out.push(b' ');
    }
    out.truncate(len);
    out
}

pub fn vector_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/vectors").join(name)
}

/// `../shared/test-vectors` beside the repository.
pub fn shared_vector_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/test-vectors").join(name)
}

pub fn read_json(path: PathBuf) -> serde_json::Value {
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("valid JSON")
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Splits `data` into pieces at random points (sizes 1..=max_piece).
pub fn random_split(data: &[u8], seed: u64, max_piece: usize) -> Vec<&[u8]> {
    let mut r = rng(seed);
    let mut out = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        let n = 1 + (r.next_u32() as usize) % max_piece.min(rest.len());
        let (a, b) = rest.split_at(n);
        out.push(a);
        rest = b;
    }
    out
}

/// Bytes of lowercase or uppercase hex (test vectors' spelling).
pub fn unhex(s: &str) -> Vec<u8> {
    assert!(s.len() % 2 == 0, "odd hex length");
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}
