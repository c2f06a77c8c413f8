//! FastCDC 2020 against the shared known answers and against the reference crate, and
//! streaming = one-shot for any split of the input.
mod common;
use common::*;
use kura_core::Error;
use kura_core::cdc::{Params, StreamChunker, chunk_lengths};
use kura_core::hash::sha256;

fn stream_lengths(p: &Params, pieces: &[&[u8]]) -> Vec<u32> {
    let mut c = StreamChunker::new(p.clone());
    let mut out = Vec::new();
    for piece in pieces {
        c.update(piece, |chunk, _| out.push(chunk.len() as u32)).unwrap();
    }
    c.finish(|chunk, _| out.push(chunk.len() as u32)).unwrap();
    out
}

fn reference_lengths(data: &[u8], min: usize, avg: usize, max: usize, seed: u64) -> Vec<u32> {
    use fastcdc::v2020::{FastCDC, Normalization};
    FastCDC::with_level_and_seed(data, min, avg, max, Normalization::Level2, seed)
        .map(|c| c.length as u32)
        .collect()
}

#[test]
fn known_answers_on_sekien_akashita() {
    let data = std::fs::read(shared_vector_path("SekienAkashita.jpg")).unwrap();
    let v = read_json(shared_vector_path("fastcdc2020.json"));
    let cases = v["cases"].as_array().unwrap();
    assert!(cases.iter().any(|c| c["seed"] == 0) && cases.iter().any(|c| c["seed"] == 666));
    for case in cases {
        assert_eq!(case["normalization"], 2);
        let seed = case["seed"].as_u64().unwrap();
        let (min, avg, max) = (
            case["min"].as_u64().unwrap() as usize,
            case["avg"].as_u64().unwrap() as usize,
            case["max"].as_u64().unwrap() as usize,
        );
        let expected: Vec<(usize, usize, String)> = case["chunks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let offset = c["offset"].as_u64().unwrap() as usize;
                let length = c["length"].as_u64().unwrap() as usize;
                (offset, length, c["sha256"].as_str().unwrap().to_string())
            })
            .collect();
        // The vectors use max = 65534 (the reference's own fixture); Kura requires
        // max = 4 * avg. No expected chunk reaches either bound, so both must agree.
        assert!(expected.iter().all(|c| c.1 < max.min(4 * avg)));
        for p in [Params::unchecked(min, avg, max, seed), Params::new(avg as u32 / 4, avg as u32, avg as u32 * 4, seed).unwrap()] {
            let lengths = chunk_lengths(&p, &data);
            let mut offset = 0;
            let got: Vec<(usize, usize, String)> = lengths
                .iter()
                .map(|&l| {
                    let c = (offset, l as usize, hex(&sha256(&data[offset..offset + l as usize])));
                    offset += l as usize;
                    c
                })
                .collect();
            assert_eq!(got, expected, "seed {seed} max {}", p.max);
            assert_eq!(stream_lengths(&p, &[&data]), lengths);
        }
    }
}

#[test]
fn equals_reference_crate_on_random_and_text_data() {
    for (i, avg) in [256usize, 1024, 4096, 16384, 65536].into_iter().enumerate() {
        for seed in [0u64, 666, 0xdead_beef_cafe_f00d] {
            for data in [random_bytes(i as u64 + seed, 40 * avg + 13), text_bytes(seed, 30 * avg + 1)] {
                let p = Params::new(avg as u32 / 4, avg as u32, avg as u32 * 4, seed).unwrap();
                assert_eq!(chunk_lengths(&p, &data), reference_lengths(&data, avg / 4, avg, avg * 4, seed), "avg {avg} seed {seed}");
            }
        }
    }
}

#[test]
fn pathological_inputs_cut_at_max_like_the_reference() {
    let p = Params::new(1024, 4096, 16384, 0).unwrap();
    for data in [vec![0u8; 100_001], vec![0xffu8; 16384 * 3], vec![7u8; 4097]] {
        let lengths = chunk_lengths(&p, &data);
        assert_eq!(lengths, reference_lengths(&data, 1024, 4096, 16384, 0));
        assert_eq!(lengths.iter().map(|&l| l as usize).sum::<usize>(), data.len());
    }
}

#[test]
fn streaming_equals_one_shot_for_any_split() {
    let p = Params::new(1024, 4096, 16384, 42).unwrap();
    for (i, len) in [0usize, 1, 1023, 1024, 1025, 4095, 16383, 16384, 16385, 300_001].into_iter().enumerate() {
        let data = random_bytes(100 + i as u64, len);
        let expected = chunk_lengths(&p, &data);
        for max_piece in [1usize, 2, 3, 17, 1000, 5000, 70_000] {
            let pieces = random_split(&data, (i * 31 + max_piece) as u64, max_piece);
            assert_eq!(stream_lengths(&p, &pieces), expected, "len {len} pieces up to {max_piece}");
        }
    }
}

#[test]
fn one_byte_pieces_on_the_known_answer_file() {
    let data = std::fs::read(shared_vector_path("SekienAkashita.jpg")).unwrap();
    let p = Params::default_params();
    let pieces: Vec<&[u8]> = data.chunks(1).collect();
    assert_eq!(stream_lengths(&p, &pieces), chunk_lengths(&p, &data));
}

#[test]
fn invalid_parameters_are_rejected_with_the_rule() {
    let cases = [
        (4096, 12288, 49152, "power of two"),
        (64, 128, 512, "between"),
        (2 << 20, 8 << 20, 32 << 20, "between"),
        (2048, 16384, 65536, "min must equal"),
        (4096, 16384, 65534, "max must equal"),
    ];
    for (min, avg, max, why) in cases {
        match Params::new(min, avg, max, 0) {
            Err(Error::InvalidParams(msg)) => assert!(msg.contains(why), "{msg} vs {why}"),
            other => panic!("{min}/{avg}/{max}: expected InvalidParams, got {:?}", other.map(|p| p.avg)),
        }
    }
}

#[test]
fn finished_chunker_refuses_more_input() {
    let mut c = StreamChunker::new(Params::default_params());
    c.finish(|_, _| {}).unwrap();
    assert_eq!(c.update(b"x", |_, _| {}), Err(Error::InvalidState));
    assert_eq!(c.finish(|_, _| {}), Err(Error::InvalidState));
}
