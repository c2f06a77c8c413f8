//! SHA-256 and BLAKE3 against published known answers, and incremental = one-shot.
mod common;
use common::*;
use kura_core::hash::{Blake3, Sha256, blake3, sha256};

#[test]
fn sha256_matches_nist_vectors() {
    let v = read_json(vector_path("sha256.json"));
    for case in v["cases"].as_array().unwrap() {
        let msg = case["text"].as_str().unwrap().repeat(case["repeat"].as_u64().unwrap() as usize);
        assert_eq!(hex(&sha256(msg.as_bytes())), case["sha256"].as_str().unwrap(), "len {}", msg.len());
    }
}

#[test]
fn blake3_matches_official_vectors() {
    let v = read_json(vector_path("blake3.json"));
    let cases = v["cases"].as_array().unwrap();
    assert!(cases.len() >= 20);
    for case in cases {
        let n = case["input_len"].as_u64().unwrap() as usize;
        let input: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
        assert_eq!(hex(&blake3(&input)), case["hash"].as_str().unwrap(), "len {n}");
    }
}

#[test]
fn incremental_equals_one_shot_for_any_split() {
    // Lengths on SHA-256 block (64) and BLAKE3 block (64) / chunk (1024) edges.
    let lengths = [0usize, 1, 55, 56, 63, 64, 65, 127, 128, 1023, 1024, 1025, 4096, 65_537, 1 << 20 | 1];
    for (i, &len) in lengths.iter().enumerate() {
        let data = random_bytes(i as u64, len);
        for (s, max_piece) in [1usize, 7, 64, 1000, 1 << 16].iter().enumerate() {
            if len > 70_000 && *max_piece < 64 {
                continue; // byte-by-byte over a megabyte adds time, not coverage
            }
            let mut a = Sha256::new();
            let mut b = Blake3::new();
            for piece in random_split(&data, (i * 10 + s) as u64, *max_piece) {
                a.update(piece);
                b.update(piece);
            }
            assert_eq!(a.finish(), sha256(&data), "sha256 len {len} split {max_piece}");
            assert_eq!(b.finish(), blake3(&data), "blake3 len {len} split {max_piece}");
        }
    }
}
