//! FastCDC 2020 ("rolling two bytes each time"), normalization level 2, optional seed.
//!
//! Boundaries are byte-for-byte those of the reference (`fastcdc` crate v5, `v2020`,
//! `with_level_and_seed(.., Normalization::Level2, seed)`), which are REAPI's FastCDC 2020
//! parameters. The scan is written as a resumable state machine so a stream fed in pieces of
//! any size (one byte included) yields the same cut points as one contiguous buffer, and each
//! byte is scanned once however it is split.

use crate::error::Error;
use crate::gear::GEAR;

/// Normalization level 2: the strict mask has two more bits than log2(avg), the loose two fewer.
const NORMALIZATION: u32 = 2;

/// Cut-point masks indexed by log2 of a target size; from the reference implementation
/// (values for 64 B..128 KiB from the FastCDC authors' C code, the rest from restic-FastCDC).
const MASKS: [u64; 26] = [
    0, 0, 0, 0, 0,
    0x0000000001804110, 0x0000000001803110, 0x0000000018035100, 0x0000001800035300,
    0x0000019000353000, 0x0000590003530000, 0x0000d90003530000, 0x0000d90103530000,
    0x0000d90303530000, 0x0000d90313530000, 0x0000d90f03530000, 0x0000d90303537000,
    0x0000d90703537000, 0x0000d90707537000, 0x0000d91707537000, 0x0000d91747537000,
    0x0000d91767537000, 0x0000d93767537000, 0x0000d93777537000, 0x0000d93777577000,
    0x0000db3777577000,
];

pub const AVG_MIN: u32 = 256;
pub const AVG_MAX: u32 = 4 * 1024 * 1024;
pub const DEFAULT_AVG: u32 = 16 * 1024;

/// Validated chunking parameters with the seeded gear tables they imply.
#[derive(Clone)]
pub struct Params {
    pub min: usize,
    pub avg: usize,
    pub max: usize,
    pub seed: u64,
    mask_s: u64,
    mask_l: u64,
    mask_s_ls: u64,
    mask_l_ls: u64,
    gear: [u64; 256],
    gear_ls: [u64; 256],
}

impl Params {
    /// Kura's rules (docs/FORMAT.md, as REAPI requires): avg a power of two in
    /// [256 B, 4 MiB], min = avg / 4, max = 4 * avg (so all three are even).
    pub fn new(min: u32, avg: u32, max: u32, seed: u64) -> Result<Self, Error> {
        if !avg.is_power_of_two() {
            return Err(Error::InvalidParams("avg must be a power of two"));
        }
        if !(AVG_MIN..=AVG_MAX).contains(&avg) {
            return Err(Error::InvalidParams("avg must be between 256 B and 4 MiB"));
        }
        if min != avg / 4 {
            return Err(Error::InvalidParams("min must equal avg / 4"));
        }
        if max != avg * 4 {
            return Err(Error::InvalidParams("max must equal 4 * avg"));
        }
        Ok(Self::unchecked(min as usize, avg as usize, max as usize, seed))
    }

    /// Any even sizes with min < avg < max; used by tests to reproduce reference vectors
    /// whose max (65534) predates the 4 * avg rule.
    pub fn unchecked(min: usize, avg: usize, max: usize, seed: u64) -> Self {
        let bits = avg.ilog2();
        let mask_s = MASKS[(bits + NORMALIZATION) as usize];
        let mask_l = MASKS[(bits - NORMALIZATION) as usize];
        let mut gear = GEAR;
        let mut gear_ls = [0u64; 256];
        for i in 0..256 {
            gear[i] ^= seed;
            gear_ls[i] = gear[i] << 1;
        }
        Self { min, avg, max, seed, mask_s, mask_l, mask_s_ls: mask_s << 1, mask_l_ls: mask_l << 1, gear, gear_ls }
    }

    pub fn default_params() -> Self {
        Self::new(DEFAULT_AVG / 4, DEFAULT_AVG, DEFAULT_AVG * 4, 0).expect("defaults are valid")
    }
}

/// Where the scan of the pending chunk stopped: the next pair index and the gear hash so far.
#[derive(Clone, Copy, Debug)]
pub struct Scan {
    index: usize,
    hash: u64,
}

impl Scan {
    pub fn start(p: &Params) -> Self {
        Self { index: p.min / 2, hash: 0 }
    }
}

/// Finds the end of the chunk that begins at `data[0]`.
///
/// Returns `Some(len)` when the boundary is final: a cut found inside `data`, `max` bytes
/// reached, or `eof`. Returns `None` when more input could still move it; `scan` then holds
/// the resume point, so no byte is rehashed on the next call.
#[inline]
pub fn find_boundary(p: &Params, data: &[u8], scan: &mut Scan, eof: bool) -> Option<usize> {
    let len = data.len();
    if len <= p.min {
        return if eof && len > 0 { Some(len) } else { None };
    }
    let remaining = len.min(p.max);
    let limit1 = p.avg.min(remaining) / 2;
    let limit2 = remaining / 2;
    let mut index = scan.index;
    let mut hash = scan.hash;
    // SAFETY of the unchecked reads: index < limit2 = remaining / 2, so 2 * index + 1 < remaining <= len.
    while index < limit1 {
        let a = index * 2;
        hash = (hash << 2).wrapping_add(p.gear_ls[unsafe { *data.get_unchecked(a) } as usize]);
        if hash & p.mask_s_ls == 0 {
            return Some(a);
        }
        hash = hash.wrapping_add(p.gear[unsafe { *data.get_unchecked(a + 1) } as usize]);
        if hash & p.mask_s == 0 {
            return Some(a + 1);
        }
        index += 1;
    }
    while index < limit2 {
        let a = index * 2;
        hash = (hash << 2).wrapping_add(p.gear_ls[unsafe { *data.get_unchecked(a) } as usize]);
        if hash & p.mask_l_ls == 0 {
            return Some(a);
        }
        hash = hash.wrapping_add(p.gear[unsafe { *data.get_unchecked(a + 1) } as usize]);
        if hash & p.mask_l == 0 {
            return Some(a + 1);
        }
        index += 1;
    }
    scan.index = index;
    scan.hash = hash;
    if len >= p.max {
        Some(p.max)
    } else if eof {
        Some(len)
    } else {
        None
    }
}

/// All chunk lengths of one contiguous buffer (the buffer is the whole input).
pub fn chunk_lengths(p: &Params, data: &[u8]) -> Vec<u32> {
    let mut out = Vec::with_capacity(data.len() / p.avg + 1);
    let mut start = 0;
    while start < data.len() {
        let mut scan = Scan::start(p);
        let len = find_boundary(p, &data[start..], &mut scan, true).expect("eof always cuts");
        out.push(len as u32);
        start += len;
    }
    out
}

/// Streaming chunker: feed pieces with `update`, end with `finish`. Keeps at most one
/// pending chunk (< max bytes) between calls. `emit(bytes, at)` receives each completed
/// chunk and its offset in `buffer()`, which stays untouched until the next call.
pub struct StreamChunker {
    params: Params,
    buf: Vec<u8>,
    /// Start of the pending (not yet emitted) chunk in `buf`.
    start: usize,
    scan: Scan,
    finished: bool,
}

impl StreamChunker {
    pub fn new(params: Params) -> Self {
        let scan = Scan::start(&params);
        Self { params, buf: Vec::new(), start: 0, scan, finished: false }
    }

    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Appends `piece` and calls `emit(chunk_bytes)` for every chunk it completes.
    pub fn update(&mut self, piece: &[u8], mut emit: impl FnMut(&[u8], usize)) -> Result<(), Error> {
        if self.finished {
            return Err(Error::InvalidState);
        }
        // Drop what was emitted on earlier calls: the pending tail moves to the front
        // (at most `max` bytes), so buffer growth is bounded by the largest piece.
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(piece);
        self.cut(false, &mut emit);
        Ok(())
    }

    /// Emits the last chunk(s); the chunker cannot be fed afterwards.
    pub fn finish(&mut self, mut emit: impl FnMut(&[u8], usize)) -> Result<(), Error> {
        if self.finished {
            return Err(Error::InvalidState);
        }
        self.finished = true;
        self.cut(true, &mut emit);
        Ok(())
    }

    fn cut(&mut self, eof: bool, emit: &mut impl FnMut(&[u8], usize)) {
        while let Some(len) =
            find_boundary(&self.params, &self.buf[self.start..], &mut self.scan, eof)
        {
            emit(&self.buf[self.start..self.start + len], self.start);
            self.start += len;
            self.scan = Scan::start(&self.params);
        }
    }

    pub fn buffer(&self) -> &[u8] {
        &self.buf
    }

    /// Bytes received but not yet part of an emitted chunk.
    pub fn pending(&self) -> usize {
        self.buf.len() - self.start
    }
}
