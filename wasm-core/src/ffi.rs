//! The WebAssembly boundary: the only file with exported functions.
//!
//! Plain C-ABI exports on numbers and pointers, no generated glue (see
//! docs/decisions/0001-raw-wasm-exports.md). The host copies input into one reusable input
//! region (`kura_input`), calls one function per buffer, and reads results from the output
//! region (`kura_out_ptr`/`kura_out_len`) or from a handle's own result area. Every call
//! crosses the boundary once per buffer, never per chunk.
//!
//! Conventions: functions returning `i32` give a count or length (>= 0) or `-code` of
//! `Error::code`; constructors return a handle (a pointer) or 0, with the code in
//! `kura_last_error`. Handles are freed by their `_free` function (the TypeScript wrapper
//! does so exactly once). wasm is single-threaded, so the thread-locals are per instance.

use std::cell::{Cell, RefCell};

use crate::cdc::{Params, StreamChunker, chunk_lengths};
use crate::codec::Codec;
use crate::crypto::{KEY_LEN, KdfParams, NONCE_LEN, SEALED_OVERHEAD, TAG_LEN, argon2id, derive_key, keyed_hash, open_in_place, seal_in_place};
use crate::error::Error;
use crate::grep::{Grep, LineMatch};
use crate::hash::{Blake3, Sha256, blake3, sha256};
use crate::ingest::Ingest;
use crate::rows::Rows;

thread_local! {
    static INPUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static OUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static LENGTHS: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
    static CODEC: RefCell<Option<Codec>> = const { RefCell::new(None) };
    static LAST_ERROR: Cell<i32> = const { Cell::new(0) };
}

fn with_input<R>(len: u32, f: impl FnOnce(&[u8]) -> R) -> R {
    INPUT.with_borrow(|input| f(&input[..(len as usize).min(input.len())]))
}

fn with_codec<R>(f: impl FnOnce(&mut Codec) -> R) -> R {
    CODEC.with_borrow_mut(|c| f(c.get_or_insert_with(Codec::new)))
}

fn set_out(bytes: &[u8]) {
    OUT.with_borrow_mut(|out| {
        out.clear();
        out.extend_from_slice(bytes);
    });
}

fn fail(e: Error) -> i32 {
    LAST_ERROR.set(e.code());
    -e.code()
}

fn params(min: u32, avg: u32, max: u32, seed_lo: u32, seed_hi: u32) -> Result<Params, Error> {
    Params::new(min, avg, max, (u64::from(seed_hi) << 32) | u64::from(seed_lo))
}

fn into_handle<T>(value: T) -> *mut T {
    Box::into_raw(Box::new(value))
}

/// SAFETY (all handle functions): `h` came from the matching constructor and was not freed;
/// the TypeScript wrapper guarantees both.
unsafe fn handle<'a, T>(h: *mut T) -> &'a mut T {
    unsafe { &mut *h }
}

// ---- memory regions -------------------------------------------------------------------

/// Makes the input region at least `len` bytes and returns its address. Growth may move it
/// and may grow wasm memory, so the host re-reads the address and its views every call.
#[unsafe(no_mangle)]
pub extern "C" fn kura_input(len: u32) -> *mut u8 {
    INPUT.with_borrow_mut(|input| {
        if input.len() < len as usize {
            input.resize(len as usize, 0);
        }
        input.as_mut_ptr()
    })
}

#[unsafe(no_mangle)]
pub extern "C" fn kura_out_ptr() -> *const u8 {
    OUT.with_borrow(|out| out.as_ptr())
}

#[unsafe(no_mangle)]
pub extern "C" fn kura_out_len() -> u32 {
    OUT.with_borrow(|out| out.len() as u32)
}

#[unsafe(no_mangle)]
pub extern "C" fn kura_last_error() -> i32 {
    LAST_ERROR.get()
}

// ---- hashing --------------------------------------------------------------------------

#[unsafe(no_mangle)]
pub extern "C" fn kura_sha256(len: u32) {
    set_out(&with_input(len, sha256));
}

#[unsafe(no_mangle)]
pub extern "C" fn kura_blake3(len: u32) {
    set_out(&with_input(len, blake3));
}

#[unsafe(no_mangle)]
pub extern "C" fn kura_sha256_new() -> *mut Sha256 {
    into_handle(Sha256::new())
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn kura_sha256_update(h: *mut Sha256, len: u32) {
    let hasher = unsafe { handle(h) };
    with_input(len, |data| hasher.update(data));
}

/// Writes the digest to the output region and frees the handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kura_sha256_finish(h: *mut Sha256) {
    let hasher = unsafe { Box::from_raw(h) };
    set_out(&hasher.finish());
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn kura_sha256_free(h: *mut Sha256) {
    drop(unsafe { Box::from_raw(h) });
}

#[unsafe(no_mangle)]
pub extern "C" fn kura_blake3_new() -> *mut Blake3 {
    into_handle(Blake3::new())
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn kura_blake3_update(h: *mut Blake3, len: u32) {
    let hasher = unsafe { handle(h) };
    with_input(len, |data| hasher.update(data));
}

/// Writes the digest to the output region and frees the handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kura_blake3_finish(h: *mut Blake3) {
    let hasher = unsafe { Box::from_raw(h) };
    set_out(&hasher.finish());
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn kura_blake3_free(h: *mut Blake3) {
    drop(unsafe { Box::from_raw(h) });
}

// ---- chunking -------------------------------------------------------------------------

/// All chunk lengths of the input region's first `len` bytes, taken as a whole document,
/// into the lengths region (`kura_lengths_ptr`). Returns the count or `-code`.
#[unsafe(no_mangle)]
pub extern "C" fn kura_cdc_oneshot(min: u32, avg: u32, max: u32, seed_lo: u32, seed_hi: u32, len: u32) -> i32 {
    match params(min, avg, max, seed_lo, seed_hi) {
        Err(e) => fail(e),
        Ok(p) => {
            let lengths = with_input(len, |data| chunk_lengths(&p, data));
            let n = lengths.len() as i32;
            LENGTHS.set(lengths);
            n
        }
    }
}

#[unsafe(no_mangle)]
pub extern "C" fn kura_lengths_ptr() -> *const u32 {
    LENGTHS.with_borrow(|l| l.as_ptr())
}

pub struct Chunker {
    inner: StreamChunker,
    lengths: Vec<u32>,
}

#[unsafe(no_mangle)]
pub extern "C" fn kura_cdc_new(min: u32, avg: u32, max: u32, seed_lo: u32, seed_hi: u32) -> *mut Chunker {
    match params(min, avg, max, seed_lo, seed_hi) {
        Ok(p) => into_handle(Chunker { inner: StreamChunker::new(p), lengths: Vec::new() }),
        Err(e) => {
            fail(e);
            std::ptr::null_mut()
        }
    }
}

/// Feeds `len` input bytes; returns how many chunks completed (lengths at `kura_cdc_lengths`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kura_cdc_update(h: *mut Chunker, len: u32) -> i32 {
    let c = unsafe { handle(h) };
    c.lengths.clear();
    let Chunker { inner, lengths } = c;
    match with_input(len, |data| inner.update(data, |chunk, _| lengths.push(chunk.len() as u32))) {
        Ok(()) => c.lengths.len() as i32,
        Err(e) => fail(e),
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn kura_cdc_finish(h: *mut Chunker) -> i32 {
    let c = unsafe { handle(h) };
    c.lengths.clear();
    let Chunker { inner, lengths } = c;
    match inner.finish(|chunk, _| lengths.push(chunk.len() as u32)) {
        Ok(()) => c.lengths.len() as i32,
        Err(e) => fail(e),
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn kura_cdc_lengths(h: *mut Chunker) -> *const u32 {
    unsafe { handle(h) }.lengths.as_ptr()
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn kura_cdc_free(h: *mut Chunker) {
    drop(unsafe { Box::from_raw(h) });
}

// ---- compression ----------------------------------------------------------------------

/// Compresses the input region's first `len` bytes into the output region; returns the
/// frame length or `-code`.
#[unsafe(no_mangle)]
pub extern "C" fn kura_zstd_compress(level: i32, len: u32) -> i32 {
    let result = OUT.with_borrow_mut(|out| {
        out.clear();
        with_input(len, |data| with_codec(|c| c.compress_append(data, level, out)))
    });
    match result {
        Ok(n) => n as i32,
        Err(e) => fail(e),
    }
}

/// Encodes one chunk (the input region's first `len` bytes) as the ingest kernel would:
/// returns the zstd frame's length (the frame in the output region), or 0 when the chunk is
/// to be stored raw (output region empty), or `-code`.
#[unsafe(no_mangle)]
pub extern "C" fn kura_chunk_encode(level: i32, len: u32) -> i32 {
    let result = OUT.with_borrow_mut(|out| {
        out.clear();
        with_input(len, |data| with_codec(|c| c.encode_append(data, level, out)))
    });
    match result {
        Ok(n) => n.unwrap_or(0) as i32,
        Err(e) => fail(e),
    }
}

/// Decompresses a frame of `len` bytes into exactly `expected` bytes of the output region;
/// returns `expected` or `-code` (never writes more than `expected`).
#[unsafe(no_mangle)]
pub extern "C" fn kura_zstd_decompress(len: u32, expected: u32) -> i32 {
    let result = OUT.with_borrow_mut(|out| {
        out.clear();
        with_input(len, |frame| with_codec(|c| c.decompress_append(frame, expected as usize, out)))
    });
    match result {
        Ok(()) => expected as i32,
        Err(e) => fail(e),
    }
}

// ---- fused ingest ---------------------------------------------------------------------

/// Flag bits of `kura_ingest_new`.
const INGEST_COMPRESS: u32 = 1;
const INGEST_NO_DOCUMENT_HASH: u32 = 2;
/// Chunk keys are BLAKE3 keyed under the 32 bytes at the start of the input region (FORMAT.md §17.4).
const INGEST_KEYED: u32 = 4;

/// Words per record in the region returned by `kura_ingest_records`:
/// `[length, codec, payload_ptr, payload_len, key (8 words, the 32 key bytes in order)]`.
const RECORD_WORDS: usize = 12;

pub struct IngestHandle {
    inner: Ingest,
    table: Vec<u32>,
}

#[unsafe(no_mangle)]
pub extern "C" fn kura_ingest_new(
    min: u32,
    avg: u32,
    max: u32,
    seed_lo: u32,
    seed_hi: u32,
    level: i32,
    flags: u32,
) -> *mut IngestHandle {
    let level = (flags & INGEST_COMPRESS != 0).then_some(level);
    let hash_document = flags & INGEST_NO_DOCUMENT_HASH == 0;
    let name_key = (flags & INGEST_KEYED != 0).then(|| INPUT.with_borrow(|input| input.get(..KEY_LEN).and_then(|k| <[u8; 32]>::try_from(k).ok())));
    if name_key == Some(None) {
        fail(Error::InvalidState);
        return std::ptr::null_mut();
    }
    let made = params(min, avg, max, seed_lo, seed_hi).and_then(|p| Ingest::new(p, level, hash_document));
    match made.map(|i| if let Some(Some(k)) = name_key { i.with_name_key(k) } else { i }) {
        Ok(inner) => into_handle(IngestHandle { inner, table: Vec::new() }),
        Err(e) => {
            fail(e);
            std::ptr::null_mut()
        }
    }
}

fn write_table(h: &mut IngestHandle) -> i32 {
    let IngestHandle { inner, table } = h;
    table.clear();
    for r in inner.records() {
        let payload = inner.payload(r);
        table.extend_from_slice(&[r.len, u32::from(r.codec), payload.as_ptr() as u32, payload.len() as u32]);
        for word in r.key.chunks_exact(4) {
            // Native (little-endian) order, so the host's byte view of the word array shows
            // the key bytes in order.
            table.push(u32::from_le_bytes([word[0], word[1], word[2], word[3]]));
        }
    }
    debug_assert_eq!(table.len(), inner.records().len() * RECORD_WORDS);
    inner.records().len() as i32
}

fn ingest_step(h: *mut IngestHandle, step: impl FnOnce(&mut Ingest, &mut Codec) -> Result<(), Error>) -> i32 {
    let h = unsafe { handle(h) };
    match with_codec(|codec| step(&mut h.inner, codec)) {
        Ok(()) => write_table(h),
        Err(e) => fail(e),
    }
}

/// Feeds `len` input bytes; returns how many chunks completed (records at
/// `kura_ingest_records`, payloads valid until the next call on this handle).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kura_ingest_update(h: *mut IngestHandle, len: u32) -> i32 {
    INPUT.with_borrow(|input| {
        let piece = &input[..(len as usize).min(input.len())];
        ingest_step(h, |ing, codec| ing.update(piece, codec).map(drop))
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn kura_ingest_finish(h: *mut IngestHandle) -> i32 {
    ingest_step(h, |ing, codec| ing.finish(codec).map(drop))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn kura_ingest_records(h: *mut IngestHandle) -> *const u32 {
    unsafe { handle(h) }.table.as_ptr()
}

/// The document's SHA-256 (32 bytes) after `kura_ingest_finish`, else null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kura_ingest_digest(h: *mut IngestHandle) -> *const u8 {
    unsafe { handle(h) }.inner.digest().map_or(std::ptr::null(), |d| d.as_ptr())
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn kura_ingest_free(h: *mut IngestHandle) {
    drop(unsafe { Box::from_raw(h) });
}

// ---- chunk groups (grouped compression, FORMAT.md §6.2) ------------------------------

/// The raw bytes of one open group of new chunks, gathered in wasm memory. A member comes
/// straight from an ingest handle's last call (`kura_group_add_record`) or from the input
/// region: a put's new chunks no longer travel out to the host one by one, into a group's
/// array there, and back in to be compressed (three copies and an allocation a chunk).
pub struct GroupHandle {
    raw: Vec<u8>,
}

#[unsafe(no_mangle)]
pub extern "C" fn kura_group_new() -> *mut GroupHandle {
    into_handle(GroupHandle { raw: Vec::new() })
}

/// Appends the raw bytes of record `index` of ingest handle `h`'s last call to group `g`;
/// returns the group's length, or `-code` (`InvalidState`: no such record, or a record that
/// is not raw — a kernel that compressed chunks itself has nothing to group).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kura_group_add_record(g: *mut GroupHandle, h: *mut IngestHandle, index: u32) -> i32 {
    let g = unsafe { handle(g) };
    let h = unsafe { handle(h) };
    match h.inner.records().get(index as usize) {
        Some(r) if r.codec == crate::codec::CODEC_RAW => {
            g.raw.extend_from_slice(h.inner.payload(r));
            g.raw.len() as i32
        }
        _ => fail(Error::InvalidState),
    }
}

/// Appends the input region's first `len` bytes to group `g`; returns the group's length.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kura_group_add_input(g: *mut GroupHandle, len: u32) -> i32 {
    let g = unsafe { handle(g) };
    with_input(len, |data| g.raw.extend_from_slice(data));
    g.raw.len() as i32
}

/// Encodes the group's bytes as `kura_chunk_encode` encodes a chunk: the zstd frame's length
/// (the frame in the output region), 0 when they are to stay raw, or `-code`. The group keeps
/// its bytes (`kura_group_raw`) until cleared.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kura_group_encode(g: *mut GroupHandle, level: i32) -> i32 {
    let g = unsafe { handle(g) };
    let result = OUT.with_borrow_mut(|out| {
        out.clear();
        with_codec(|c| c.encode_append(&g.raw, level, out))
    });
    match result {
        Ok(n) => n.unwrap_or(0) as i32,
        Err(e) => fail(e),
    }
}

/// The group's raw bytes (`kura_group_add_*` answered their length); valid until the next
/// call on the group.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kura_group_raw(g: *mut GroupHandle) -> *const u8 {
    unsafe { handle(g) }.raw.as_ptr()
}

/// Empties the group (its capacity stays: the next group is about as large).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kura_group_clear(g: *mut GroupHandle) {
    unsafe { handle(g) }.raw.clear();
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn kura_group_free(g: *mut GroupHandle) {
    drop(unsafe { Box::from_raw(g) });
}

// ---- vector rows (semantic search's scan) ---------------------------------------------

/// Rows of `dims` int8 values; 0 (and `kura_last_error`) for a width `Rows::new` refuses.
#[unsafe(no_mangle)]
pub extern "C" fn kura_rows_new(dims: u32) -> *mut Rows {
    match Rows::new(dims as usize) {
        Ok(rows) => into_handle(rows),
        Err(e) => {
            fail(e);
            std::ptr::null_mut()
        }
    }
}

/// Appends `count` rows from the input region: `count * dims` int8 values, then `count` f32
/// scales, then `count` u32 groups (little-endian). Returns the rows held, or `-code`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kura_rows_push(h: *mut Rows, count: u32, len: u32) -> i32 {
    let rows = unsafe { handle(h) };
    with_input(len, |input| {
        let values = input.len().saturating_sub(count as usize * 8);
        let (data, rest) = input.split_at(values);
        let (scales, groups) = rest.split_at(rest.len() / 2);
        let data: Vec<i8> = data.iter().map(|&b| b as i8).collect();
        let scales: Vec<f32> = scales.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        let groups: Vec<u32> = groups.chunks_exact(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        match rows.push(&data, &scales, &groups) {
            Ok(()) => rows.len() as i32,
            Err(e) => fail(e),
        }
    })
}

/// The query in the input region (`dims` f32, little-endian).
fn query_in(len: u32) -> Vec<f32> {
    with_input(len, |input| input.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect())
}

/// Scores every row against the query in the input region (`dims` f32, little-endian) into the
/// output region (one f32 per row, row order). Returns the row count, or `-code`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kura_rows_scores(h: *mut Rows, len: u32) -> i32 {
    let rows = unsafe { handle(h) };
    let query = query_in(len);
    OUT.with_borrow_mut(|out| {
        let mut scores = Vec::new();
        match rows.scores(&query, &mut scores) {
            Ok(()) => {
                out.clear();
                out.extend(scores.iter().flat_map(|s| s.to_le_bytes()));
                scores.len() as i32
            }
            Err(e) => fail(e),
        }
    })
}

/// The `k` best groups for the query in the input region (`Rows::top`) into the output region:
/// per group its best row (u32) then its score (f32), little-endian, best first. Returns how
/// many, or `-code`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kura_rows_top(h: *mut Rows, k: u32, len: u32) -> i32 {
    let rows = unsafe { handle(h) };
    let query = query_in(len);
    OUT.with_borrow_mut(|out| {
        let mut best = Vec::new();
        match rows.top(&query, k as usize, &mut best) {
            Ok(()) => {
                out.clear();
                for b in &best {
                    out.extend_from_slice(&b.row.to_le_bytes());
                    out.extend_from_slice(&b.score.to_le_bytes());
                }
                best.len() as i32
            }
            Err(e) => fail(e),
        }
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn kura_rows_clear(h: *mut Rows) {
    unsafe { handle(h) }.clear();
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn kura_rows_free(h: *mut Rows) {
    drop(unsafe { Box::from_raw(h) });
}

// ---- grep (decision 0055) --------------------------------------------------------------

/// A matcher for the pattern in the input region (UTF-8). 0 when it is not usable: then
/// `kura_last_error` is InvalidPattern and the output region holds the reason (UTF-8).
#[unsafe(no_mangle)]
pub extern "C" fn kura_grep_new(ignore_case: u32, len: u32) -> *mut Grep {
    let made = with_input(len, |input| match std::str::from_utf8(input) {
        Ok(pattern) => Grep::new(pattern, ignore_case != 0),
        Err(_) => Err("the pattern is not UTF-8".to_string()),
    });
    match made {
        Ok(g) => into_handle(g),
        Err(why) => {
            set_out(why.as_bytes());
            fail(Error::InvalidPattern);
            std::ptr::null_mut()
        }
    }
}

thread_local! {
    static LINES: RefCell<Vec<LineMatch>> = const { RefCell::new(Vec::new()) };
}

/// The matching lines of the text in the input region, into the output region: the text's
/// newline count (u32), then five u32 (little-endian) a line — its index in the text, its start
/// and end, its first match's start and end (byte offsets). Returns the count of lines.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kura_grep_lines(h: *mut Grep, len: u32) -> i32 {
    let g = unsafe { handle(h) };
    LINES.with_borrow_mut(|lines| {
        let newlines = with_input(len, |text| {
            g.lines(text, lines);
            crate::grep::newlines(text)
        });
        OUT.with_borrow_mut(|out| {
            out.clear();
            out.extend_from_slice(&newlines.to_le_bytes());
            for m in lines.iter() {
                for v in [m.line, m.start, m.end, m.match_start, m.match_end] {
                    out.extend_from_slice(&v.to_le_bytes());
                }
            }
        });
        lines.len() as i32
    })
}

thread_local! {
    static SPANS: RefCell<Vec<(u32, u32)>> = const { RefCell::new(Vec::new()) };
}

/// Every match in the line in the input region (`grep -o`), into the output region: two u32
/// (little-endian) a match, its start and end (byte offsets). Returns the count of matches.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn kura_grep_matches(h: *mut Grep, len: u32) -> i32 {
    let g = unsafe { handle(h) };
    SPANS.with_borrow_mut(|spans| {
        with_input(len, |line| g.matches_in(line, spans));
        OUT.with_borrow_mut(|out| {
            out.clear();
            for &(a, b) in spans.iter() {
                out.extend_from_slice(&a.to_le_bytes());
                out.extend_from_slice(&b.to_le_bytes());
            }
        });
        spans.len() as i32
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn kura_grep_free(h: *mut Grep) {
    drop(unsafe { Box::from_raw(h) });
}

// ---- encryption (crypto.rs, decision 0062) ----------------------------------------------

/// The input region's first `n` bytes split at `cuts` (lengths, in order), or None when the
/// region is shorter than their sum.
fn split_input<const N: usize>(cuts: [usize; N], f: impl FnOnce([&[u8]; N]) -> i32) -> i32 {
    INPUT.with_borrow(|input| {
        let total: usize = cuts.iter().sum();
        if input.len() < total {
            return fail(Error::InvalidState);
        }
        let mut at = 0;
        let parts = cuts.map(|n| {
            let part = &input[at..at + n];
            at += n;
            part
        });
        f(parts)
    })
}

/// Seals: the input region holds key (32) || nonce (24) || associated data (`ad_len`) ||
/// plaintext (`len`); the output region gets nonce || ciphertext || tag. Returns its length.
#[unsafe(no_mangle)]
pub extern "C" fn kura_seal(ad_len: u32, len: u32) -> i32 {
    split_input([KEY_LEN, NONCE_LEN, ad_len as usize, len as usize], |[key, nonce, ad, plain]| {
        OUT.with_borrow_mut(|out| {
            out.clear();
            out.extend_from_slice(nonce);
            out.extend_from_slice(plain);
            let tag = seal_in_place(key.try_into().unwrap(), nonce.try_into().unwrap(), ad, &mut out[NONCE_LEN..]);
            out.extend_from_slice(&tag);
            out.len() as i32
        })
    })
}

/// Opens: the input region holds key (32) || associated data (`ad_len`) || sealed bytes
/// (`len`: nonce || ciphertext || tag); the output region gets the plaintext. Returns its
/// length, or -code (Unauthentic) with nothing in the output region.
#[unsafe(no_mangle)]
pub extern "C" fn kura_open(ad_len: u32, len: u32) -> i32 {
    if (len as usize) < SEALED_OVERHEAD {
        set_out(&[]);
        return fail(Error::Unauthentic);
    }
    let body = len as usize - SEALED_OVERHEAD;
    split_input([KEY_LEN, ad_len as usize, NONCE_LEN, body, TAG_LEN], |[key, ad, nonce, ciphertext, tag]| {
        OUT.with_borrow_mut(|out| {
            out.clear();
            out.extend_from_slice(ciphertext);
            match open_in_place(key.try_into().unwrap(), nonce.try_into().unwrap(), ad, out, tag.try_into().unwrap()) {
                Ok(()) => out.len() as i32,
                Err(e) => {
                    out.clear();
                    fail(e)
                }
            }
        })
    })
}

/// Argon2id: the input region holds password || salt || secret || associated data (their
/// lengths given); the output region gets `out_len` bytes of key. Returns `out_len` or -code.
#[unsafe(no_mangle)]
pub extern "C" fn kura_argon2id(memory_kib: u32, passes: u32, lanes: u32, password_len: u32, salt_len: u32, secret_len: u32, ad_len: u32, out_len: u32) -> i32 {
    let params = KdfParams { memory_kib, passes, lanes };
    split_input([password_len as usize, salt_len as usize, secret_len as usize, ad_len as usize], |[password, salt, secret, ad]| {
        let mut key = vec![0u8; out_len as usize];
        match argon2id(password, salt, params, secret, ad, &mut key) {
            Ok(()) => {
                set_out(&key);
                out_len as i32
            }
            Err(e) => fail(e),
        }
    })
}

/// BLAKE3's keyed hash: the input region holds key (32) || data (`len`); 32 bytes out.
#[unsafe(no_mangle)]
pub extern "C" fn kura_blake3_keyed(len: u32) -> i32 {
    split_input([KEY_LEN, len as usize], |[key, data]| {
        set_out(&keyed_hash(key.try_into().unwrap(), data));
        32
    })
}

/// BLAKE3's key derivation: the input region holds the context (UTF-8, `context_len`) ||
/// key material (`len`); 32 bytes out.
#[unsafe(no_mangle)]
pub extern "C" fn kura_blake3_derive_key(context_len: u32, len: u32) -> i32 {
    split_input([context_len as usize, len as usize], |[context, material]| match std::str::from_utf8(context) {
        Ok(context) => {
            set_out(&derive_key(context, material));
            32
        }
        Err(_) => fail(Error::InvalidKdfParams),
    })
}
