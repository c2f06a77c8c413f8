//! Kura's byte core: SHA-256 and BLAKE3 hashing, FastCDC 2020 chunking, zstd compression and
//! the fused ingest kernel that does all of them in one pass; and the exact scoring of int8
//! vector rows semantic search scans; and grep's linear-time matcher. Pure Rust, no JavaScript types:
//! `ffi` is the one file that exports functions to WebAssembly hosts.

pub mod cdc;
pub mod codec;
pub mod crypto;
pub mod error;
mod gear;
pub mod grep;
pub mod hash;
pub mod ingest;
pub mod rows;

#[cfg(target_arch = "wasm32")]
mod ffi;

pub use error::Error;
