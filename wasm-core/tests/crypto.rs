//! Encryption's byte work against published known answers: Wycheproof's XChaCha20-Poly1305
//! vectors (valid and forged), RFC 9106's Argon2id vector and the reference implementation's
//! answers, BLAKE3's official keyed-hash and key-derivation vectors; and the sealed form's
//! properties (every tampering refused).
mod common;
use common::*;
use kura_core::Error;
use kura_core::crypto::{KdfParams, NONCE_LEN, SEALED_OVERHEAD, argon2id, derive_key, keyed_hash, open, open_in_place, seal, seal_in_place};

fn key32(bytes: &[u8]) -> [u8; 32] {
    bytes.try_into().unwrap()
}

#[test]
fn xchacha20_poly1305_matches_wycheproof() {
    let v = read_json(vector_path("wycheproof-xchacha20-poly1305.json"));
    let (mut valid, mut forged, mut other_nonce) = (0, 0, 0);
    for group in v["testGroups"].as_array().unwrap() {
        for t in group["tests"].as_array().unwrap() {
            let field = |k: &str| unhex(t[k].as_str().unwrap());
            let (key, iv, aad, msg, ct, tag) = (field("key"), field("iv"), field("aad"), field("msg"), field("ct"), field("tag"));
            let id = t["tcId"].as_u64().unwrap();
            if iv.len() != NONCE_LEN {
                // Kura's sealed form carries a 24-byte nonce: other sizes cannot be written.
                assert_eq!(t["result"], "invalid", "tc {id}");
                other_nonce += 1;
                continue;
            }
            let nonce: [u8; 24] = iv.as_slice().try_into().unwrap();
            let mut buf = ct.clone();
            let opened = open_in_place(&key32(&key), &nonce, &aad, &mut buf, tag.as_slice().try_into().unwrap());
            if t["result"] == "valid" {
                assert_eq!(opened, Ok(()), "tc {id}");
                assert_eq!(buf, msg, "tc {id}: plaintext");
                let mut enc = msg.clone();
                let got = seal_in_place(&key32(&key), &nonce, &aad, &mut enc);
                assert_eq!((enc, got.to_vec()), (ct, tag), "tc {id}: ciphertext and tag");
                valid += 1;
            } else {
                assert_eq!(opened, Err(Error::Unauthentic), "tc {id}");
                forged += 1;
            }
        }
    }
    assert_eq!((valid, forged, other_nonce), (246, 60, 9));
}

#[test]
fn argon2id_matches_rfc9106_and_the_reference_implementation() {
    let v = read_json(vector_path("argon2id.json"));
    let run = |c: &serde_json::Value, secret: &[u8], ad: &[u8]| {
        let params = KdfParams {
            memory_kib: c["memory_kib"].as_u64().unwrap() as u32,
            passes: c["passes"].as_u64().unwrap() as u32,
            lanes: c["lanes"].as_u64().unwrap() as u32,
        };
        let mut out = [0u8; 32];
        argon2id(&unhex(c["password_hex"].as_str().unwrap()), &unhex(c["salt_hex"].as_str().unwrap()), params, secret, ad, &mut out).unwrap();
        assert_eq!(hex(&out), c["tag"].as_str().unwrap(), "{c}");
    };
    let rfc = &v["rfc9106"];
    run(rfc, &unhex(rfc["secret_hex"].as_str().unwrap()), &unhex(rfc["ad_hex"].as_str().unwrap()));
    let cases = v["cases"].as_array().unwrap();
    assert!(cases.len() >= 4);
    for c in cases {
        run(c, &[], &[]);
    }
}

#[test]
fn argon2id_refuses_parameters_out_of_bounds() {
    let mut out = [0u8; 32];
    let ok = KdfParams { memory_kib: 64, passes: 1, lanes: 1 };
    assert_eq!(argon2id(b"pw", &[0; 15], ok, &[], &[], &mut out), Err(Error::InvalidKdfParams), "salt under 16 bytes");
    assert_eq!(argon2id(b"pw", &[0; 16], KdfParams { memory_kib: (1 << 20) + 1, ..ok }, &[], &[], &mut out), Err(Error::InvalidKdfParams), "over 1 GiB");
    assert_eq!(argon2id(b"pw", &[0; 16], KdfParams { passes: 0, ..ok }, &[], &[], &mut out), Err(Error::InvalidKdfParams), "no pass");
    assert_eq!(argon2id(b"pw", &[0; 16], KdfParams { lanes: 0, ..ok }, &[], &[], &mut out), Err(Error::InvalidKdfParams), "no lane");
    assert_eq!(argon2id(b"pw", &[0; 16], ok, &[], &[], &mut [0u8; 8]), Err(Error::InvalidKdfParams), "short tag");
    assert_eq!(argon2id(b"pw", &[0; 16], ok, &[], &[], &mut out), Ok(()));
}

#[test]
fn blake3_keyed_hash_and_derive_key_match_official_vectors() {
    let v = read_json(vector_path("blake3-keyed.json"));
    let key = key32(v["key"].as_str().unwrap().as_bytes());
    let context = v["context_string"].as_str().unwrap();
    let cases = v["cases"].as_array().unwrap();
    assert!(cases.len() >= 30);
    for c in cases {
        let n = c["input_len"].as_u64().unwrap() as usize;
        let input: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
        assert_eq!(hex(&keyed_hash(&key, &input)), c["keyed_hash"].as_str().unwrap(), "keyed len {n}");
        assert_eq!(hex(&derive_key(context, &input)), c["derive_key"].as_str().unwrap(), "derive len {n}");
    }
}

#[test]
fn sealed_bytes_round_trip_and_every_tampering_is_refused() {
    let key = key32(&random_bytes(1, 32));
    let other = key32(&random_bytes(2, 32));
    for (i, len) in [0usize, 1, 15, 16, 17, 63, 64, 65, 1000, 65_537].into_iter().enumerate() {
        let nonce: [u8; 24] = random_bytes(100 + i as u64, 24).try_into().unwrap();
        let plain = random_bytes(200 + i as u64, len);
        let ad = b"pack 0123 record 16";
        let sealed = seal(&key, &nonce, ad, &plain);
        assert_eq!(sealed.len(), len + SEALED_OVERHEAD);
        assert_eq!(&sealed[..24], &nonce);
        if len >= 16 {
            assert!(!sealed.windows(16).any(|w| w == &plain[..16]), "plaintext visible in the sealed bytes");
        }
        assert_eq!(open(&key, ad, &sealed).unwrap(), plain);
        assert_eq!(open(&other, ad, &sealed), Err(Error::Unauthentic), "another key");
        assert_eq!(open(&key, b"pack 0123 record 17", &sealed), Err(Error::Unauthentic), "other associated data");
        assert_eq!(open(&key, ad, &sealed[..sealed.len() - 1]), Err(Error::Unauthentic), "truncated");
        let mut longer = sealed.clone();
        longer.push(0);
        assert_eq!(open(&key, ad, &longer), Err(Error::Unauthentic), "extended");
        // Every byte of a short one, sampled bytes of a long one: nonce, ciphertext and tag.
        let step = (sealed.len() / 97).max(1);
        for at in (0..sealed.len()).step_by(step) {
            let mut bad = sealed.clone();
            bad[at] ^= 1 << (at % 8);
            assert_eq!(open(&key, ad, &bad), Err(Error::Unauthentic), "len {len}: bit flipped at {at}");
        }
    }
    assert_eq!(open(&key, b"", &[0u8; SEALED_OVERHEAD - 1]), Err(Error::Unauthentic), "shorter than nonce and tag");
}
