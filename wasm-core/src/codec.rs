//! zstd per chunk: compression at a chosen level and decompression bounded by the raw length
//! recorded beside every stored chunk.
//!
//! Contexts are created once and reused (creating a zstd context costs more than compressing
//! a small chunk). Output is appended to a caller's `Vec` so the ingest kernel can pack many
//! payloads into one region that JavaScript reads in one go.

use crate::error::Error;
use zstd_safe::{CCtx, CParameter, DCtx, WriteBuf, zstd_sys};

/// Fast (negative) levels down to -7, up to zstd's maximum 22.
pub const LEVEL_MIN: i32 = -7;
pub const LEVEL_MAX: i32 = 22;
pub const DEFAULT_LEVEL: i32 = 3;

/// Codec byte recorded with every stored chunk (docs/FORMAT.md).
pub const CODEC_RAW: u8 = 0;
pub const CODEC_ZSTD: u8 = 1;

/// A chunk is stored compressed only when that saves at least 1/16 of its raw size; less
/// would not pay for the decompression on every read.
pub fn worth_compressing(raw_len: usize, compressed_len: usize) -> bool {
    compressed_len <= raw_len - raw_len / 16 && compressed_len < raw_len
}

/// Bytes sampled by `likely_incompressible`.
const SAMPLE: usize = 4096;

/// Order-0 entropy (bits per byte) above which no compressor can save the 1/16 that
/// `worth_compressing` asks for, unless the data repeats itself in long matches.
const ENTROPY_LIMIT: f64 = 7.5;

/// Skips zstd for data that looks random (already compressed, encrypted): the byte entropy of
/// an evenly spread sample says whether order-0 coding could pay. Long repeats of random data
/// inside one chunk would be missed; repeats across chunks are what deduplication catches.
/// Inputs under 1 KiB are left to zstd (its own checks are cheap there).
pub fn likely_incompressible(data: &[u8]) -> bool {
    if data.len() < 1024 {
        return false;
    }
    let mut counts = [0u32; 256];
    let n = if data.len() <= SAMPLE {
        for &b in data {
            counts[b as usize] += 1;
        }
        data.len()
    } else {
        // 16-byte runs spread over the whole chunk keep some locality, like btrfs's heuristic.
        let runs = SAMPLE / 16;
        let step = (data.len() - 16) / runs;
        for r in 0..runs {
            for &b in &data[r * step..r * step + 16] {
                counts[b as usize] += 1;
            }
        }
        runs * 16
    };
    // H = log2(n) - (1/n) * sum(c * log2 c), with c * log2 c from a table (wasm has no log2
    // instruction; 256 software calls cost more than the histogram).
    let table = c_log2_c();
    let sum: f64 = counts.iter().map(|&c| f64::from(table[c as usize])).sum();
    let total = n as f64;
    total.log2() - sum / total > ENTROPY_LIMIT
}

/// `c * log2(c)` for every count a sample can hold, computed once.
fn c_log2_c() -> &'static [f32; SAMPLE + 1] {
    static TABLE: std::sync::OnceLock<Box<[f32; SAMPLE + 1]>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = Box::new([0f32; SAMPLE + 1]);
        for (c, v) in t.iter_mut().enumerate().skip(1) {
            *v = (c as f64 * (c as f64).log2()) as f32;
        }
        t
    })
}

/// The unused capacity of a `Vec` after its current length, as a zstd output buffer.
struct Tail<'a> {
    vec: &'a mut Vec<u8>,
    start: usize,
}

unsafe impl WriteBuf for Tail<'_> {
    fn as_slice(&self) -> &[u8] {
        &self.vec[self.start..]
    }
    fn capacity(&self) -> usize {
        self.vec.capacity() - self.start
    }
    fn as_mut_ptr(&mut self) -> *mut u8 {
        // SAFETY: start <= len <= capacity.
        unsafe { self.vec.as_mut_ptr().add(self.start) }
    }
    unsafe fn filled_until(&mut self, n: usize) {
        // SAFETY: zstd wrote n initialised bytes after start, within capacity.
        unsafe { self.vec.set_len(self.start + n) }
    }
}

pub struct Codec {
    cctx: CCtx<'static>,
    dctx: DCtx<'static>,
    level: i32,
}

impl Default for Codec {
    fn default() -> Self {
        Self::new()
    }
}

impl Codec {
    pub fn new() -> Self {
        let mut cctx = CCtx::create();
        // No zstd checksum: every chunk is already identified by its BLAKE3 key, which the
        // read path re-checks. The content size stays in the header so a reader can reject
        // a frame that claims more than the recorded raw length before decoding it.
        let _ = cctx.set_parameter(CParameter::ChecksumFlag(false));
        let _ = cctx.set_parameter(CParameter::ContentSizeFlag(true));
        let _ = cctx.set_parameter(CParameter::CompressionLevel(DEFAULT_LEVEL));
        Self { cctx, dctx: DCtx::create(), level: DEFAULT_LEVEL }
    }

    pub fn check_level(level: i32) -> Result<(), Error> {
        if (LEVEL_MIN..=LEVEL_MAX).contains(&level) && level != 0 {
            Ok(())
        } else {
            Err(Error::InvalidLevel)
        }
    }

    /// Appends one zstd frame of `src` to `out`; returns its length.
    /// How a chunk is stored: a zstd frame appended to `out` (returns its length) when the
    /// chunk does not look random and the frame saves enough (`worth_compressing`), else
    /// `None` and `out` unchanged (the chunk is stored raw). The ingest kernel and
    /// `kura_chunk_encode` (chunks compressed after deduplication) share this one policy.
    pub fn encode_append(&mut self, src: &[u8], level: i32, out: &mut Vec<u8>) -> Result<Option<usize>, Error> {
        if likely_incompressible(src) {
            return Ok(None);
        }
        let start = out.len();
        let n = self.compress_append(src, level, out)?;
        if worth_compressing(src.len(), n) {
            Ok(Some(n))
        } else {
            out.truncate(start);
            Ok(None)
        }
    }

    pub fn compress_append(&mut self, src: &[u8], level: i32, out: &mut Vec<u8>) -> Result<usize, Error> {
        Self::check_level(level)?;
        if level != self.level {
            self.cctx.set_parameter(CParameter::CompressionLevel(level)).map_err(|_| Error::InvalidLevel)?;
            self.level = level;
        }
        out.reserve(zstd_safe::compress_bound(src.len()));
        let start = out.len();
        let mut tail = Tail { vec: out, start };
        self.cctx.compress2(&mut tail, src).map_err(|_| Error::CompressFailed)
    }

    /// Appends exactly `expected` decompressed bytes to `out`, or fails without writing
    /// past that bound: a frame that declares or produces more is `FrameTooLarge`, fewer is
    /// `FrameTooShort`, anything malformed, truncated or followed by garbage is `CorruptFrame`.
    pub fn decompress_append(&mut self, src: &[u8], expected: usize, out: &mut Vec<u8>) -> Result<(), Error> {
        match zstd_safe::get_frame_content_size(src) {
            Err(_) => return Err(Error::CorruptFrame),
            Ok(Some(n)) if n > expected as u64 => return Err(Error::FrameTooLarge),
            Ok(Some(n)) if n < expected as u64 => return Err(Error::FrameTooShort),
            _ => {}
        }
        let start = out.len();
        // reserve_exact on a Vec whose spare capacity is already larger keeps it; the bound
        // is enforced below by giving zstd a window of exactly `expected` bytes.
        out.reserve_exact(expected);
        let mut window = Bounded { vec: out, start, cap: expected };
        match self.dctx.decompress(&mut window, src) {
            Ok(n) if n == expected => Ok(()),
            Ok(_) => {
                out.truncate(start);
                Err(Error::FrameTooShort)
            }
            Err(code) => {
                out.truncate(start);
                // SAFETY: plain FFI on an error code.
                let kind = unsafe { zstd_sys::ZSTD_getErrorCode(code) };
                if kind == zstd_sys::ZSTD_ErrorCode::ZSTD_error_dstSize_tooSmall {
                    Err(Error::FrameTooLarge)
                } else {
                    Err(Error::CorruptFrame)
                }
            }
        }
    }
}

/// Like `Tail`, but zstd sees exactly `cap` bytes of room.
struct Bounded<'a> {
    vec: &'a mut Vec<u8>,
    start: usize,
    cap: usize,
}

unsafe impl WriteBuf for Bounded<'_> {
    fn as_slice(&self) -> &[u8] {
        &self.vec[self.start..]
    }
    fn capacity(&self) -> usize {
        self.cap
    }
    fn as_mut_ptr(&mut self) -> *mut u8 {
        // SAFETY: start <= len and start + cap <= capacity (reserved by the caller).
        unsafe { self.vec.as_mut_ptr().add(self.start) }
    }
    unsafe fn filled_until(&mut self, n: usize) {
        // SAFETY: zstd wrote n <= cap initialised bytes after start.
        unsafe { self.vec.set_len(self.start + n) }
    }
}

/// One-shot helpers on a fresh codec, for tests and callers without a long-lived context.
pub fn compress(src: &[u8], level: i32) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    Codec::new().compress_append(src, level, &mut out)?;
    Ok(out)
}

pub fn decompress(src: &[u8], expected: usize) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    Codec::new().decompress_append(src, expected, &mut out)?;
    Ok(out)
}
