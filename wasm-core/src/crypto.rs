//! Encryption's byte work (docs/FORMAT.md §17, decision 0062): XChaCha20-Poly1305 sealing,
//! Argon2id for keys derived from passwords, and BLAKE3's keyed hash and key derivation.
//!
//! The host supplies every random byte (nonces, salts, keys): wasm32-unknown-unknown has no
//! randomness of its own, and Node's and browsers' generators are the well-kept ones.

use chacha20poly1305::aead::{AeadInOut, KeyInit};
use chacha20poly1305::{Tag, XChaCha20Poly1305, XNonce};

use crate::error::Error;

/// A key of the AEAD, of BLAKE3's keyed mode, and what key derivation gives.
pub const KEY_LEN: usize = 32;
/// XChaCha20's nonce: long enough to be drawn at random for every object, never counted.
pub const NONCE_LEN: usize = 24;
/// Poly1305's tag.
pub const TAG_LEN: usize = 16;
/// What sealing adds to a plaintext: the nonce before it and the tag after it.
pub const SEALED_OVERHEAD: usize = NONCE_LEN + TAG_LEN;

/// Argon2id's bounds here: at most 1 GiB of memory (a browser tab must be able to open the
/// store), passes and lanes as RFC 9106 allows, a tag of 16 to 64 bytes.
pub const KDF_MAX_MEMORY_KIB: u32 = 1 << 20;

/// Encrypts `buf` in place under `key` and `nonce`, authenticating `ad` with it; the tag.
pub fn seal_in_place(key: &[u8; KEY_LEN], nonce: &[u8; NONCE_LEN], ad: &[u8], buf: &mut [u8]) -> [u8; TAG_LEN] {
    let cipher = XChaCha20Poly1305::new(key.into());
    // Encryption fails only for plaintexts over 256 GiB (the cipher's counter): not reachable
    // from a 32-bit address space.
    let tag = cipher
        .encrypt_inout_detached(&XNonce::from(*nonce), ad, buf.into())
        .expect("plaintext within XChaCha20-Poly1305's limit");
    tag.into()
}

/// Decrypts `buf` in place when `tag` authenticates it with `ad`; else `Unauthentic`, and
/// `buf` holds nothing of the plaintext (the crate decrypts only after the tag checks).
pub fn open_in_place(key: &[u8; KEY_LEN], nonce: &[u8; NONCE_LEN], ad: &[u8], buf: &mut [u8], tag: &[u8; TAG_LEN]) -> Result<(), Error> {
    let cipher = XChaCha20Poly1305::new(key.into());
    cipher
        .decrypt_inout_detached(&XNonce::from(*nonce), ad, buf.into(), &Tag::from(*tag))
        .map_err(|_| Error::Unauthentic)
}

/// `nonce || ciphertext || tag` of `plaintext`: the sealed form every encrypted object uses.
pub fn seal(key: &[u8; KEY_LEN], nonce: &[u8; NONCE_LEN], ad: &[u8], plaintext: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(plaintext.len() + SEALED_OVERHEAD);
    out.extend_from_slice(nonce);
    out.extend_from_slice(plaintext);
    let tag = seal_in_place(key, nonce, ad, &mut out[NONCE_LEN..]);
    out.extend_from_slice(&tag);
    out
}

/// The plaintext of a sealed `nonce || ciphertext || tag`, or `Unauthentic` (too short,
/// tampered with, sealed under another key or with other associated data).
pub fn open(key: &[u8; KEY_LEN], ad: &[u8], sealed: &[u8]) -> Result<Vec<u8>, Error> {
    if sealed.len() < SEALED_OVERHEAD {
        return Err(Error::Unauthentic);
    }
    let (nonce, rest) = sealed.split_at(NONCE_LEN);
    let (ciphertext, tag) = rest.split_at(rest.len() - TAG_LEN);
    let mut buf = ciphertext.to_vec();
    open_in_place(key, nonce.try_into().unwrap(), ad, &mut buf, tag.try_into().unwrap())?;
    Ok(buf)
}

/// Argon2id cost parameters (RFC 9106 names: m in KiB, t passes, p lanes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KdfParams {
    pub memory_kib: u32,
    pub passes: u32,
    pub lanes: u32,
}

/// Argon2id (version 0x13) of `password` and `salt` into `out`; `secret` and `ad` are RFC
/// 9106's optional inputs (empty in Kura's use; the published vectors set them).
pub fn argon2id(password: &[u8], salt: &[u8], params: KdfParams, secret: &[u8], ad: &[u8], out: &mut [u8]) -> Result<(), Error> {
    if params.memory_kib > KDF_MAX_MEMORY_KIB || !(16..=64).contains(&out.len()) || salt.len() < 16 {
        return Err(Error::InvalidKdfParams);
    }
    let mut builder = argon2::ParamsBuilder::new();
    builder.m_cost(params.memory_kib).t_cost(params.passes).p_cost(params.lanes).output_len(out.len());
    if !ad.is_empty() {
        builder.data(argon2::AssociatedData::new(ad).map_err(|_| Error::InvalidKdfParams)?);
    }
    let built = builder.build().map_err(|_| Error::InvalidKdfParams)?;
    let kdf = if secret.is_empty() {
        argon2::Argon2::new(argon2::Algorithm::Argon2id, argon2::Version::V0x13, built)
    } else {
        argon2::Argon2::new_with_secret(secret, argon2::Algorithm::Argon2id, argon2::Version::V0x13, built).map_err(|_| Error::InvalidKdfParams)?
    };
    kdf.hash_password_into(password, salt, out).map_err(|_| Error::InvalidKdfParams)
}

/// BLAKE3's keyed hash (a MAC; an encrypted store's chunk names).
pub fn keyed_hash(key: &[u8; KEY_LEN], data: &[u8]) -> [u8; 32] {
    *blake3::keyed_hash(key, data).as_bytes()
}

/// BLAKE3's key derivation: a key for one purpose (`context`, a fixed string) from `material`.
pub fn derive_key(context: &str, material: &[u8]) -> [u8; KEY_LEN] {
    blake3::derive_key(context, material)
}
