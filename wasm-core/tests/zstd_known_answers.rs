//! zstd's output for a fixed corpus, as known answers (zstd-known-answers.json): slices of a
//! public English text (../shared/collections/cisi/CISI.ALL) at sizes from 1 byte to the whole
//! 2 MB, at levels from -5 to 22, each frame's length and SHA-256.
//!
//! Natively this crate compiles zstd's C code as upstream ships it (the wasm32-only changes of
//! vendor/zstd-sys/kura-wasm32.patch are not built here), so this test pins the answers to
//! upstream zstd 1.5.7; packages/core/test/zstd-known-answers.test.ts asks the wasm module for
//! the same frames, byte for byte. `KURA_WRITE_ZSTD_KAT=1 cargo test --test zstd_known_answers`
//! writes the file again (only when the corpus or the zstd version changes on purpose).
use kura_core::codec::compress;
use sha2::{Digest, Sha256};
use std::path::PathBuf;

/// The cases: (offset, size, level), the same list the TypeScript test makes.
fn cases(corpus_len: usize) -> Vec<(usize, usize, i32)> {
    let sizes = [1usize, 2, 7, 31, 100, 1000, 4096, 16_384, 65_536, 131_089, 262_144, 1 << 20, corpus_len];
    let levels = [-5, -1, 1, 2, 3, 4, 6, 9, 12, 16, 19, 22];
    let mut out = Vec::new();
    for (i, &size) in sizes.iter().enumerate() {
        for (j, &level) in levels.iter().enumerate() {
            // High levels only over the smaller slices: they are slow, and wasm slower still.
            if level > 9 && size > 65_536 {
                continue;
            }
            let room = corpus_len - size;
            let offset = if room == 0 { 0 } else { (i * 7919 + j * 104_729) % room };
            out.push((offset, size, level));
        }
    }
    out
}

#[test]
fn zstd_frames_match_the_known_answers() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let corpus_path = root.join("../../shared/collections/cisi/CISI.ALL");
    let corpus = std::fs::read(&corpus_path).unwrap_or_else(|e| panic!("{}: {e}", corpus_path.display()));
    let fixture = root.join("tests/zstd-known-answers.json");
    let mut answers = Vec::new();
    for (offset, size, level) in cases(corpus.len()) {
        let frame = compress(&corpus[offset..offset + size], level).unwrap();
        let digest: String = Sha256::digest(&frame).iter().map(|b| format!("{b:02x}")).collect();
        answers.push(serde_json::json!({ "offset": offset, "size": size, "level": level, "length": frame.len(), "sha256": digest }));
    }
    let made = serde_json::json!({ "corpus": "collections/cisi/CISI.ALL", "corpusLength": corpus.len(), "zstd": "1.5.7", "frames": answers });
    if std::env::var("KURA_WRITE_ZSTD_KAT").as_deref() == Ok("1") {
        std::fs::write(&fixture, serde_json::to_string_pretty(&made).unwrap() + "\n").unwrap();
    }
    let known: serde_json::Value = serde_json::from_slice(&std::fs::read(&fixture).unwrap()).unwrap();
    assert_eq!(known["frames"].as_array().unwrap().len(), made["frames"].as_array().unwrap().len());
    for (k, m) in known["frames"].as_array().unwrap().iter().zip(made["frames"].as_array().unwrap()) {
        assert_eq!(k, m, "a frame differs from the known answer");
    }
}
