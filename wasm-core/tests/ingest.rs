//! The fused ingest kernel agrees with the separate operations, for any split.
mod common;
use common::*;
use kura_core::Error;
use kura_core::cdc::{Params, chunk_lengths};
use kura_core::codec::{CODEC_RAW, CODEC_ZSTD, Codec, decompress};
use kura_core::hash::{blake3, sha256};
use kura_core::ingest::Ingest;

struct Out {
    offset: u64,
    len: u32,
    key: [u8; 32],
    codec: u8,
    payload: Vec<u8>,
}

fn run(params: &Params, level: Option<i32>, pieces: &[&[u8]]) -> (Vec<Out>, [u8; 32], u64) {
    let mut codec = Codec::new();
    let mut ing = Ingest::new(params.clone(), level, true).unwrap();
    let mut out = Vec::new();
    let collect = |ing: &Ingest, out: &mut Vec<Out>| {
        for r in ing.records() {
            out.push(Out { offset: r.offset, len: r.len, key: r.key, codec: r.codec, payload: ing.payload(r).to_vec() });
        }
    };
    for piece in pieces {
        ing.update(piece, &mut codec).unwrap();
        collect(&ing, &mut out);
    }
    let size = ing.size();
    ing.finish(&mut codec).unwrap();
    collect(&ing, &mut out);
    (out, *ing.digest().unwrap(), size)
}

#[test]
fn agrees_with_separate_operations() {
    let p = Params::new(1024, 4096, 16384, 7).unwrap();
    let mut data = text_bytes(1, 200_000);
    data.extend(random_bytes(2, 100_000)); // incompressible tail: stored raw
    let (chunks, digest, size) = run(&p, Some(3), &[&data]);
    assert_eq!(digest, sha256(&data));
    assert_eq!(size, data.len() as u64);
    let lengths: Vec<u32> = chunks.iter().map(|c| c.len).collect();
    assert_eq!(lengths, chunk_lengths(&p, &data));
    let (mut raw, mut zstd) = (0, 0);
    for c in &chunks {
        let bytes = &data[c.offset as usize..c.offset as usize + c.len as usize];
        assert_eq!(c.key, blake3(bytes));
        match c.codec {
            CODEC_ZSTD => {
                zstd += 1;
                assert!(c.payload.len() < bytes.len());
                assert_eq!(decompress(&c.payload, bytes.len()).unwrap(), bytes);
            }
            CODEC_RAW => {
                raw += 1;
                assert_eq!(c.payload, bytes);
            }
            other => panic!("codec {other}"),
        }
    }
    assert!(raw > 0 && zstd > 0, "raw {raw} zstd {zstd}");
}

#[test]
fn encoding_raw_chunks_afterwards_gives_the_kernels_payloads() {
    // Chunks deduplicated before compression (the store's workers) are encoded one by one with
    // `encode_append`: the stored form must be exactly what the kernel would have emitted.
    let p = Params::new(1024, 4096, 16384, 7).unwrap();
    let mut data = text_bytes(3, 150_000);
    data.extend(random_bytes(4, 60_000));
    data.extend(vec![0u8; 40_000]);
    let (fused, _, _) = run(&p, Some(3), &[&data]);
    let (raw, _, _) = run(&p, None, &[&data]);
    assert_eq!(fused.len(), raw.len());
    let mut codec = Codec::new();
    let mut kinds = [0, 0];
    for (f, r) in fused.iter().zip(&raw) {
        assert_eq!((f.offset, f.len, f.key), (r.offset, r.len, r.key));
        assert_eq!(r.codec, CODEC_RAW);
        let mut out = vec![7u8]; // appends after what is there
        match codec.encode_append(&r.payload, 3, &mut out).unwrap() {
            Some(n) => {
                assert_eq!((f.codec, n), (CODEC_ZSTD, out.len() - 1));
                assert_eq!(&out[1..], &f.payload[..]);
            }
            None => {
                assert_eq!(f.codec, CODEC_RAW);
                assert_eq!(out, [7u8]);
            }
        }
        kinds[f.codec as usize] += 1;
    }
    assert!(kinds[0] > 0 && kinds[1] > 0, "raw and zstd chunks both covered: {kinds:?}");
}

#[test]
fn without_compression_payloads_are_the_raw_chunks() {
    let p = Params::default_params();
    let data = text_bytes(9, 150_000);
    let (chunks, digest, _) = run(&p, None, &[&data]);
    assert_eq!(digest, sha256(&data));
    assert!(chunks.iter().all(|c| c.codec == CODEC_RAW));
    assert_eq!(chunks.iter().flat_map(|c| c.payload.clone()).collect::<Vec<u8>>(), data);
}

#[test]
fn any_split_gives_the_same_chunks_and_digest() {
    let p = Params::new(256, 1024, 4096, 0).unwrap();
    let data = text_bytes(5, 60_001);
    let (expected, digest, _) = run(&p, Some(1), &[&data]);
    for max_piece in [1usize, 3, 999, 10_000] {
        let pieces = random_split(&data, max_piece as u64, max_piece);
        let (got, d, _) = run(&p, Some(1), &pieces);
        assert_eq!(d, digest);
        assert_eq!(got.len(), expected.len());
        for (a, b) in got.iter().zip(&expected) {
            assert_eq!((a.offset, a.len, a.key, a.codec, &a.payload), (b.offset, b.len, b.key, b.codec, &b.payload));
        }
    }
}

#[test]
fn empty_document_has_no_chunks_and_the_empty_digest() {
    let (chunks, digest, size) = run(&Params::default_params(), Some(3), &[]);
    assert!(chunks.is_empty());
    assert_eq!(size, 0);
    assert_eq!(hex(&digest), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

#[test]
fn finished_kernel_refuses_more_input_and_bad_levels_are_refused() {
    let mut codec = Codec::new();
    let mut ing = Ingest::new(Params::default_params(), None, true).unwrap();
    ing.finish(&mut codec).unwrap();
    assert_eq!(ing.update(b"x", &mut codec).err(), Some(Error::InvalidState));
    assert!(matches!(Ingest::new(Params::default_params(), Some(99), true), Err(Error::InvalidLevel)));
}

#[test]
fn a_name_key_names_chunks_by_keyed_blake3_and_changes_nothing_else() {
    let p = Params::new(1024, 4096, 16384, 7).unwrap();
    let data = text_bytes(9, 100_000);
    let (plain, digest, size) = run(&p, Some(3), &[&data[..40_000], &data[40_000..]]);
    let key = [0x5au8; 32];
    let mut codec = Codec::new();
    let mut ing = Ingest::new(p.clone(), Some(3), true).unwrap().with_name_key(key);
    let mut keyed = Vec::new();
    let take = |ing: &Ingest, keyed: &mut Vec<(u64, u32, [u8; 32], u8, Vec<u8>)>| keyed.extend(ing.records().iter().map(|r| (r.offset, r.len, r.key, r.codec, ing.payload(r).to_vec())));
    for piece in [&data[..10_000], &data[10_000..]] {
        ing.update(piece, &mut codec).unwrap();
        take(&ing, &mut keyed);
    }
    ing.finish(&mut codec).unwrap();
    take(&ing, &mut keyed);
    assert_eq!(*ing.digest().unwrap(), digest, "the document digest is SHA-256 of the bytes either way");
    assert_eq!(ing.size(), size);
    assert_eq!(keyed.len(), plain.len());
    for (k, o) in keyed.iter().zip(&plain) {
        let raw = &data[o.offset as usize..o.offset as usize + o.len as usize];
        assert_eq!((k.0, k.1, k.3, &k.4), (o.offset, o.len, o.codec, &o.payload), "boundaries and payloads unchanged");
        assert_eq!(k.2, kura_core::crypto::keyed_hash(&key, raw));
        assert_ne!(k.2, o.key);
        assert_eq!(o.key, blake3(raw));
    }
}
