//! zstd round trips at every level, and rejection of bombs, truncation and corruption
//! without writing past the caller's bound.
mod common;
use common::*;
use kura_core::Error;
use kura_core::codec::{Codec, LEVEL_MAX, LEVEL_MIN, compress, decompress};
use zstd_safe::{CCtx, CParameter};

#[test]
fn round_trips_at_every_level_and_size() {
    let mut codec = Codec::new();
    for level in (LEVEL_MIN..=LEVEL_MAX).filter(|&l| l != 0) {
        for (i, len) in [0usize, 1, 100, 4096, 65_536, 300_000].into_iter().enumerate() {
            if level > 19 && len > 65_536 {
                continue; // ultra levels are slow; the small sizes cover them
            }
            for data in [text_bytes(i as u64, len), random_bytes(i as u64, len), vec![0u8; len]] {
                let mut frame = Vec::new();
                codec.compress_append(&data, level, &mut frame).unwrap();
                let mut out = vec![9u8; 3]; // appends after existing bytes
                codec.decompress_append(&frame, data.len(), &mut out).unwrap();
                assert_eq!(&out[3..], &data[..], "level {level} len {len}");
            }
        }
    }
}

#[test]
fn compression_pays_on_text_and_zeros() {
    let text = text_bytes(1, 65_536);
    assert!(compress(&text, 3).unwrap().len() < text.len() / 2);
    assert!(compress(&vec![0u8; 65_536], 3).unwrap().len() < 100);
}

#[test]
fn random_data_is_recognised_as_incompressible_and_text_is_not() {
    use kura_core::codec::likely_incompressible;
    for len in [1024usize, 4096, 65_536] {
        assert!(likely_incompressible(&random_bytes(len as u64, len)), "random {len}");
        assert!(!likely_incompressible(&text_bytes(len as u64, len)), "text {len}");
        assert!(!likely_incompressible(&vec![0u8; len]), "zeros {len}");
        // Where the check says "incompressible", zstd indeed cannot save 1/16.
        let r = random_bytes(7 + len as u64, len);
        assert!(compress(&r, 3).unwrap().len() > len - len / 16);
    }
    assert!(!likely_incompressible(&random_bytes(1, 1000)), "small inputs are left to zstd");
}

#[test]
fn invalid_levels_are_rejected() {
    for level in [0, LEVEL_MIN - 1, LEVEL_MAX + 1, i32::MAX, i32::MIN] {
        assert_eq!(compress(b"abc", level), Err(Error::InvalidLevel), "level {level}");
    }
}

/// A frame without a content size in its header, so only decoding can find its length.
fn frame_without_size(data: &[u8]) -> Vec<u8> {
    let mut cctx = CCtx::create();
    cctx.set_parameter(CParameter::ContentSizeFlag(false)).unwrap();
    let mut out = vec![0u8; zstd_safe::compress_bound(data.len())];
    let mut out_buf = zstd_safe::OutBuffer::around(&mut out[..]);
    let mut in_buf = zstd_safe::InBuffer::around(data);
    // Streaming API: the frame header then has no pledged size.
    cctx.compress_stream2(&mut out_buf, &mut in_buf, zstd_safe::zstd_sys::ZSTD_EndDirective::ZSTD_e_end).unwrap();
    let n = out_buf.pos();
    out.truncate(n);
    assert!(zstd_safe::get_frame_content_size(&out).unwrap().is_none());
    out
}

#[test]
fn bomb_declaring_more_than_the_bound_is_rejected_before_decoding() {
    // 64 MiB of zeros compresses to a few KiB and says so in its header.
    let bomb = compress(&vec![0u8; 64 << 20], 3).unwrap();
    assert!(bomb.len() < 64 << 10);
    let mut out = Vec::new();
    assert_eq!(Codec::new().decompress_append(&bomb, 4096, &mut out), Err(Error::FrameTooLarge));
    assert!(out.is_empty());
    assert!(out.capacity() < 64 << 20, "no allocation of the declared size");
}

#[test]
fn bomb_without_declared_size_stops_at_the_bound() {
    let bomb = frame_without_size(&vec![0u8; 16 << 20]);
    let mut out = Vec::new();
    assert_eq!(Codec::new().decompress_append(&bomb, 65_536, &mut out), Err(Error::FrameTooLarge));
    assert!(out.is_empty() && out.capacity() < 1 << 20);
    // The same frame with the right bound decodes.
    assert_eq!(decompress(&bomb, 16 << 20).unwrap().len(), 16 << 20);
}

#[test]
fn shorter_than_expected_is_an_error() {
    let data = text_bytes(3, 10_000);
    assert_eq!(decompress(&compress(&data, 3).unwrap(), 10_001), Err(Error::FrameTooShort));
    assert_eq!(decompress(&frame_without_size(&data), 10_001), Err(Error::FrameTooShort));
}

#[test]
fn truncated_corrupt_and_trailing_garbage_frames_are_rejected() {
    let data = text_bytes(4, 50_000);
    let frame = compress(&data, 3).unwrap();
    let mut codec = Codec::new();
    for cut in [0, 1, 4, 5, frame.len() / 2, frame.len() - 1] {
        let r = codec.decompress_append(&frame[..cut], data.len(), &mut Vec::new());
        assert!(r.is_err(), "truncated at {cut} of {}", frame.len());
    }
    let mut garbage = frame.clone();
    garbage.extend_from_slice(b"trailing");
    assert_eq!(codec.decompress_append(&garbage, data.len(), &mut Vec::new()), Err(Error::CorruptFrame));
    assert_eq!(codec.decompress_append(b"not a zstd frame", 16, &mut Vec::new()), Err(Error::CorruptFrame));
    // Flip each byte of the frame in turn: the result is an error or, where zstd cannot
    // tell (a literal byte), different bytes of the right length -- never a panic or more
    // than the bound. Kura's chunk keys catch the latter on read.
    let mut detected = 0;
    for i in 0..frame.len() {
        let mut bad = frame.clone();
        bad[i] ^= 0x5a;
        let mut out = Vec::new();
        match codec.decompress_append(&bad, data.len(), &mut out) {
            Err(_) => detected += 1,
            Ok(()) => assert_eq!(out.len(), data.len()),
        }
    }
    assert!(detected > 0);
}
