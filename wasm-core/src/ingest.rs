//! The fused ingest kernel: the hot path of every put.
//!
//! One call per input piece does all the byte work on it: the document's SHA-256, FastCDC
//! boundaries, each completed chunk's BLAKE3 key and, when asked, its zstd frame (or the raw
//! bytes when compression does not pay). Results for the call are laid out in two regions —
//! a record per chunk and a payload area — that the caller reads at once.

use crate::cdc::{Params, StreamChunker};
use crate::codec::{CODEC_RAW, CODEC_ZSTD, Codec};
use crate::error::Error;
use crate::crypto::keyed_hash;
use crate::hash::{Digest32, Sha256, blake3};

/// One completed chunk of the last `update`/`finish` call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// Offset of the chunk in the document.
    pub offset: u64,
    pub len: u32,
    pub key: Digest32,
    pub codec: u8,
    payload: Payload,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Payload {
    /// Raw bytes, at this offset of the chunker's buffer.
    Raw(usize),
    /// A zstd frame at (offset, length) of the payload area.
    Zstd(usize, usize),
}

pub struct Ingest {
    chunker: StreamChunker,
    sha: Option<Sha256>,
    level: Option<i32>,
    /// An encrypted store's chunk-names key (FORMAT.md §17.4): keys are BLAKE3 keyed under it.
    name_key: Option<[u8; 32]>,
    records: Vec<Record>,
    payloads: Vec<u8>,
    offset: u64,
    digest: Option<Digest32>,
}

impl Ingest {
    /// `level`: zstd level, or `None` to emit raw payloads only. `hash_document`: false when
    /// the caller takes the document digest itself (e.g. with a native SHA-256).
    pub fn new(params: Params, level: Option<i32>, hash_document: bool) -> Result<Self, Error> {
        if let Some(l) = level {
            Codec::check_level(l)?;
        }
        Ok(Self {
            chunker: StreamChunker::new(params),
            sha: hash_document.then(Sha256::new),
            level,
            name_key: None,
            records: Vec::new(),
            payloads: Vec::new(),
            offset: 0,
            digest: None,
        })
    }

    /// Names chunks by BLAKE3 keyed under `key` instead of plain BLAKE3 (an encrypted store).
    pub fn with_name_key(mut self, key: [u8; 32]) -> Self {
        self.name_key = Some(key);
        self
    }

    /// Feeds one piece; `records()` then lists the chunks it completed.
    pub fn update(&mut self, piece: &[u8], codec: &mut Codec) -> Result<&[Record], Error> {
        if self.digest.is_some() {
            return Err(Error::InvalidState);
        }
        self.records.clear();
        self.payloads.clear();
        if let Some(sha) = self.sha.as_mut() {
            sha.update(piece);
        }
        let Self { chunker, level, name_key, records, payloads, offset, .. } = self;
        let mut failed = None;
        chunker.update(piece, |bytes, at| {
            if let Err(e) = Self::emit(bytes, at, *level, name_key.as_ref(), codec, records, payloads, offset) {
                failed.get_or_insert(e);
            }
        })?;
        failed.map_or(Ok(&self.records[..]), Err)
    }

    /// Ends the document: emits the last chunk(s) and fixes the digest.
    pub fn finish(&mut self, codec: &mut Codec) -> Result<&[Record], Error> {
        if self.digest.is_some() {
            return Err(Error::InvalidState);
        }
        self.records.clear();
        self.payloads.clear();
        let Self { chunker, level, name_key, records, payloads, offset, .. } = self;
        let mut failed = None;
        chunker.finish(|bytes, at| {
            if let Err(e) = Self::emit(bytes, at, *level, name_key.as_ref(), codec, records, payloads, offset) {
                failed.get_or_insert(e);
            }
        })?;
        self.digest = Some(self.sha.take().map(Sha256::finish).unwrap_or([0; 32]));
        failed.map_or(Ok(&self.records[..]), Err)
    }

    fn emit(
        bytes: &[u8],
        at: usize,
        level: Option<i32>,
        name_key: Option<&[u8; 32]>,
        codec: &mut Codec,
        records: &mut Vec<Record>,
        payloads: &mut Vec<u8>,
        offset: &mut u64,
    ) -> Result<(), Error> {
        let key = name_key.map_or_else(|| blake3(bytes), |k| keyed_hash(k, bytes));
        let mut payload = Payload::Raw(at);
        if let Some(level) = level {
            let start = payloads.len();
            if let Some(n) = codec.encode_append(bytes, level, payloads)? {
                payload = Payload::Zstd(start, n);
            }
        }
        let codec_byte = if matches!(payload, Payload::Zstd(..)) { CODEC_ZSTD } else { CODEC_RAW };
        records.push(Record { offset: *offset, len: bytes.len() as u32, key, codec: codec_byte, payload });
        *offset += bytes.len() as u64;
        Ok(())
    }

    pub fn records(&self) -> &[Record] {
        &self.records
    }

    /// The stored form of a record's chunk (valid until the next call).
    pub fn payload(&self, r: &Record) -> &[u8] {
        match r.payload {
            Payload::Raw(at) => &self.chunker.buffer()[at..at + r.len as usize],
            Payload::Zstd(at, n) => &self.payloads[at..at + n],
        }
    }

    /// Bytes fed so far.
    pub fn size(&self) -> u64 {
        self.offset + self.chunker.pending() as u64
    }

    /// The document's SHA-256 once `finish` has run (zeros when the caller hashes).
    pub fn digest(&self) -> Option<&Digest32> {
        self.digest.as_ref()
    }
}
