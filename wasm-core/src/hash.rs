//! SHA-256 (document digests) and BLAKE3-256 (chunk keys), one-shot and incremental.
//!
//! Thin wrappers so the rest of the crate and the FFI name one type per algorithm. With
//! `-C target-feature=+simd128`, sha2 0.11 picks its wasm SIMD message schedule and the
//! blake3 crate (feature `wasm32_simd`) hashes four chunks at a time.

use sha2::Digest as _;

pub type Digest32 = [u8; 32];

#[derive(Clone, Default)]
pub struct Sha256(sha2::Sha256);

impl Sha256 {
    pub fn new() -> Self {
        Self(sha2::Sha256::new())
    }
    pub fn update(&mut self, data: &[u8]) {
        self.0.update(data);
    }
    pub fn finish(self) -> Digest32 {
        self.0.finalize().into()
    }
}

pub fn sha256(data: &[u8]) -> Digest32 {
    sha2::Sha256::digest(data).into()
}

#[derive(Clone, Default)]
pub struct Blake3(blake3::Hasher);

impl Blake3 {
    pub fn new() -> Self {
        Self(blake3::Hasher::new())
    }
    pub fn update(&mut self, data: &[u8]) {
        self.0.update(data);
    }
    pub fn finish(&self) -> Digest32 {
        *self.0.finalize().as_bytes()
    }
}

pub fn blake3(data: &[u8]) -> Digest32 {
    *blake3::hash(data).as_bytes()
}
